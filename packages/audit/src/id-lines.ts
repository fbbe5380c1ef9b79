/**
 * The first line of every event id seen (for DUPLICATE_ID): a `Map<string, number>` with only
 * `firstLine(id, line)`, as an open-addressing hash table over typed arrays.
 *
 * Why: a build folds one id per event (734,711 at 1 GB) and keeps them all; a JS `Map` of that
 * size cost ~1.2 µs per get + set (rehashing its ordered table as it grows), this one about half.
 *
 * Guarantees: exact (ids are compared as strings after a 32-bit hash match); the answer for an id
 * is the line given the first time it was seen.
 */

/** FNV-1a over the UTF-16 code units. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Ids and the line each was first seen on. */
export class IdLines {
  private slots = new Int32Array(1 << 12).fill(-1);
  private hashes = new Uint32Array(1 << 12);
  private readonly ids: string[] = [];
  private readonly lines: number[] = [];

  /** Distinct ids held. */
  get size(): number {
    return this.ids.length;
  }

  /**
   * The line `id` was first seen on; when it is new, remember `line` for it and return -1.
   * @example const t = new IdLines(); t.firstLine("a", 3); // -1, then t.firstLine("a", 9) === 3
   */
  firstLine(id: string, line: number): number {
    const h = hashOf(id);
    const mask = this.slots.length - 1;
    let j = h & mask;
    for (;;) {
      const k = this.slots[j];
      if (k < 0) break;
      if (this.hashes[j] === h && this.ids[k] === id) return this.lines[k];
      j = (j + 1) & mask;
    }
    this.slots[j] = this.ids.length;
    this.hashes[j] = h;
    this.ids.push(id);
    this.lines.push(line);
    if (this.ids.length * 2 > this.slots.length) this.grow();
    return -1;
  }

  /** Double the table (load factor stays ≤ 1/2). */
  private grow(): void {
    const size = this.slots.length * 2;
    const mask = size - 1;
    const slots = new Int32Array(size).fill(-1);
    const hashes = new Uint32Array(size);
    for (let q = 0; q < this.slots.length; q++) {
      const k = this.slots[q];
      if (k < 0) continue;
      let p = this.hashes[q] & mask;
      while (slots[p] >= 0) p = (p + 1) & mask;
      slots[p] = k;
      hashes[p] = this.hashes[q];
    }
    this.slots = slots;
    this.hashes = hashes;
  }
}
