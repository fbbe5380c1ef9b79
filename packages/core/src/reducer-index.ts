/**
 * Per-codons-array index of record positions by codonId, so the reducer's "first record" and
 * "latest record such that…" rules cost O(records of that codon) instead of a scan of the run.
 *
 * The index is memoized per array (WeakMap). The pure reducer never mutates arrays, so a memo stays
 * true; it is carried to the next array when a record is replaced (ids keep their positions) and
 * copied-and-extended on append. The in-place fold (`reducer-inplace.ts`) owns private arrays and
 * gives each its own index, which it then extends in place.
 */

type Rec = Record<string, unknown>;
/** codonId → positions of its records, ascending. */
export type CodonIndex = Map<unknown, number[]>;

const memo = new WeakMap<readonly unknown[], CodonIndex>();

/** The index of `codons` (built once per array). Do not mutate it. */
export function codonIndex(codons: readonly unknown[]): CodonIndex {
  let m = memo.get(codons);
  if (m === undefined) {
    m = new Map();
    for (let i = 0; i < codons.length; i++) {
      const id = (codons[i] as Rec).codonId;
      const list = m.get(id);
      if (list === undefined) m.set(id, [i]);
      else list.push(i);
    }
    memo.set(codons, m);
  }
  return m;
}

/** `next` has the same codonIds at the same positions as `prev`: share its index if it has one. */
export function carryIndex(prev: readonly unknown[], next: readonly unknown[]): void {
  const m = memo.get(prev);
  if (m !== undefined) memo.set(next, m);
}

/** `next` is `prev` plus `codonId` appended: give it a copy of prev's index, extended (when prev has one). */
export function appendIndex(prev: readonly unknown[], next: readonly unknown[], codonId: unknown): void {
  const m = memo.get(prev);
  if (m === undefined) return;
  const copy = new Map(m);
  const list = copy.get(codonId);
  copy.set(codonId, list === undefined ? [prev.length] : [...list, prev.length]);
  memo.set(next, copy);
}

/** A private deep copy of the index of `codons` for `owned` (a private copy of it), to mutate in place. */
export function ownIndex(codons: readonly unknown[], owned: readonly unknown[]): CodonIndex {
  const m = new Map<unknown, number[]>();
  for (const [id, list] of codonIndex(codons)) m.set(id, list.slice());
  memo.set(owned, m);
  return m;
}

/** Positions of `codonId`'s records in `codons` (empty when none). */
export function positionsOf(codons: readonly unknown[], codonId: unknown): readonly number[] {
  return codonIndex(codons).get(codonId) ?? NONE;
}

const NONE: readonly number[] = [];
