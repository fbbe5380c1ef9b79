/**
 * Writing an extended diet's container from a journal, streaming: the journal is read in chunks,
 * cut into blocks of whole lines, each block's column pass runs in a worker thread (or here), and
 * this thread deduplicates the text pieces into the pack, seals the blocks and appends records and
 * pack frames to the container in the order they are ready. Tables and footer come last; the
 * caller fsyncs and verifies.
 *
 * Memory: at most BLOCKS_IN_FLIGHT blocks of input, one pack frame being filled, and the piece
 * map (every unique piece of the journal once: the dedupe's price, see docs/extended-diet.md).
 */
import type { FileHandle } from "node:fs/promises";
import { createSha256, writeAll } from "@hankweave-journal/cas";
import {
  BLOCK_ENTRY_BYTES, BLOCK_TARGET_BYTES, CONTAINER_MAGIC, FORMAT_VERSION, FRAME_ENTRY_BYTES, HEADER_BYTES,
  PACK_FRAME_TARGET_BYTES, PACK_LEVEL, PACK_WINDOW_BYTES, STREAM_LEVEL,
  writeBlockEntry, writeFooter, writeFrameEntry,
  type BlockEntry, type FrameEntry,
} from "./format.js";
import { randomInt } from "node:crypto";
import { ColumnPool, type ColumnsDone } from "./column-pool.js";
import type { LongPieces } from "./block-codec.js";

/** Blocks read ahead of the one being sealed (each up to BLOCK_TARGET_BYTES plus one line). */
const BLOCKS_IN_FLIGHT = 3;
/** Read past a block's target size, to find the newline that ends it (more when a line is longer). */
const READ_SLACK = 64 * 1024;

export interface ExtWriteOptions {
  blockTargetBytes?: number;
  /** The compatible diet's frame size option, taken as the block size when blockTargetBytes is absent. */
  frameTargetBytes?: number;
  packFrameTargetBytes?: number;
  /** The pack's reference window (default PACK_WINDOW_BYTES; small values are for tests and measurements). */
  packWindowBytes?: number;
  /** Worker threads for the column pass (0: in this thread). Default: 2 from two blocks on. */
  workers?: number;
  /** Crash-test hook, called after each record or frame written. */
  hook?: (step: string, n: number) => void | Promise<void>;
  /** Called once the whole journal is read and its last block submitted (the diet starts its verification's workers then). */
  onReadDone?: () => void;
}

export interface ExtWriteResult {
  originalSha256: string;
  originalBytes: number;
  lines: number;
  endsWithNewline: boolean;
  totalEvents: number;
  encodedLines: number;
  blocks: number;
  frames: number;
  containerBytes: number;
  text: { values: number; refs: number; unique: number; uniqueBytes: number };
}

/** Are `a[i, i + len)` and `b[j, j + len)` equal? (A loop for short runs: a native compare costs more to call.) */
function sameBytes(a: Buffer, i: number, b: Buffer, j: number, len: number): boolean {
  if (len > 96) return a.compare(b, j, j + len, i, i + len) === 0;
  for (let k = 0; k < len; k++) if (a[i + k] !== b[j + k]) return false;
  return true;
}

/** A piece in the pack's window: its bytes (a view of the block's pieces, then of its frame's raw bytes). */
interface Entry {
  id: number;
  at: number;
  buf: Buffer;
  start: number;
  end: number;
  /** The next piece with the same hash (the chain is almost always one long). */
  next: Entry | null;
  hash: number;
}

/**
 * The pack being written: piece → id, for the pieces inside the reference window only (a piece
 * whose first byte is more than `window` pool bytes behind the pool's end is forgotten, and stored
 * again if seen again), so memory and a decoder's cache stay bounded by the window. Pieces are
 * compared by their UTF-8 bytes (the same as comparing the strings: they are well-formed), found
 * by the hash their column pass computed. (Exported for its unit test.)
 */
export class Pack {
  private readonly byHash = new Map<number, Entry>();
  /** The pieces still in the map, oldest first (a queue: `inWindow[head]` is the oldest). */
  private readonly inWindow: Entry[] = [];
  private head = 0;
  pending: Entry[] = [];
  pendingBytes = 0;
  firstPending = 0;
  uniqueBytes = 0;
  nextId = 0;
  poolBytes = 0;

  /** Frames filled while a block's pieces were looked up, waiting to be written (in piece order). */
  readonly full: { raw: Buffer; firstPiece: number; pieces: number }[] = [];

  constructor(private readonly window: number, private readonly frameTarget: number) {}

  private find(hash: number, buf: Buffer, start: number, end: number): Entry | null {
    const len = end - start;
    for (let e = this.byHash.get(hash) ?? null; e !== null; e = e.next) {
      if (e.end - e.start === len && sameBytes(e.buf, e.start, buf, start, len)) return e;
    }
    return null;
  }

  private unlink(old: Entry): void {
    let e = this.byHash.get(old.hash) ?? null;
    if (e === old) {
      if (old.next === null) this.byHash.delete(old.hash);
      else this.byHash.set(old.hash, old.next);
      return;
    }
    for (; e !== null; e = e.next) {
      if (e.next === old) {
        e.next = old.next;
        return;
      }
    }
  }

  /** The id of the piece `buf[start, end)` (hash `hash`), adding it to the pending frame when new. */
  idOf(hash: number, buf: Buffer, start: number, end: number): number {
    const known = this.find(hash, buf, start, end);
    if (known !== null && this.poolBytes - known.at <= this.window) return known.id;
    if (known !== null) this.unlink(known);
    const e: Entry = { id: this.nextId++, at: this.poolBytes, buf, start, end, next: this.byHash.get(hash) ?? null, hash };
    this.byHash.set(hash, e);
    this.inWindow.push(e);
    const bytes = end - start + 1;
    this.poolBytes += bytes;
    this.pending.push(e);
    this.pendingBytes += bytes;
    this.uniqueBytes += bytes;
    if (this.pendingBytes >= this.frameTarget) this.full.push(this.take());
    // Forget what left the window.
    while (this.head < this.inWindow.length && this.poolBytes - this.inWindow[this.head].at > this.window) {
      this.unlink(this.inWindow[this.head++]);
    }
    if (this.head > 4096 && this.head * 2 > this.inWindow.length) {
      this.inWindow.splice(0, this.head);
      this.head = 0;
    }
    return e.id;
  }

  /**
   * Take the pending pieces as one frame's raw bytes (each piece and a `\n`); their entries then
   * point into the frame, so the window keeps frames alive, not whole blocks' pieces.
   */
  take(): { raw: Buffer; firstPiece: number; pieces: number } {
    const raw = Buffer.allocUnsafe(this.pendingBytes);
    let o = 0;
    for (const e of this.pending) {
      e.buf.copy(raw, o, e.start, e.end);
      const len = e.end - e.start;
      e.buf = raw;
      e.start = o;
      e.end = o + len;
      o += len;
      raw[o++] = 0x0a;
    }
    const out = { raw, firstPiece: this.firstPending, pieces: this.pending.length };
    this.firstPending += this.pending.length;
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }
}

/**
 * The pack's ids of a block's long pieces, in order. Its own function: as a loop inside `seal`,
 * TurboFan compiled it on-stack once per block (10 times per 100 MB diet) and threw it away at
 * the code after the loop, which had no feedback yet.
 */
function idsOf(pack: Pack, p: LongPieces): Int32Array {
  const ids = new Int32Array(p.ends.length);
  for (let k = 0; k < ids.length; k++) ids[k] = pack.idOf(p.hashes[k], p.bytes, p.starts[k], p.ends[k]);
  return ids;
}

/**
 * Write the container for the journal open as `src` (`size` bytes) into `out` (empty, written
 * by offsets; null writes nothing: a dry run that still measures). Returns what the manifest needs.
 */
export async function writeExtContainer(src: FileHandle, size: number, out: FileHandle | null, opts: ExtWriteOptions = {}): Promise<ExtWriteResult> {
  const blockTarget = Math.max(1, opts.blockTargetBytes ?? opts.frameTargetBytes ?? BLOCK_TARGET_BYTES);
  const frameTarget = Math.max(1, opts.packFrameTargetBytes ?? PACK_FRAME_TARGET_BYTES);
  const hook = opts.hook ?? (() => undefined);
  const workers = opts.workers ?? (size >= 2 * blockTarget ? 2 : 0);
  const pool = new ColumnPool(workers);
  // The pieces' hash seed: any value gives the same container (hashes only pick candidates);
  // a random one keeps a crafted journal from making many pieces collide.
  const seed = randomInt(0x40000000);
  const sha = createSha256();
  const pack = new Pack(opts.packWindowBytes ?? PACK_WINDOW_BYTES, frameTarget);
  const blocks: BlockEntry[] = [];
  const frames: FrameEntry[] = [];
  let at = HEADER_BYTES;
  const head = Buffer.alloc(HEADER_BYTES);
  head.writeUInt32LE(CONTAINER_MAGIC, 0);
  head.writeUInt32LE(FORMAT_VERSION, 4);
  if (out !== null) await writeAll(out, head, 0);
  const append = async (b: Buffer): Promise<number> => {
    const off = at;
    at += b.length;
    if (out !== null) await writeAll(out, b, off);
    return off;
  };
  const res = { lines: 0, events: 0, encoded: 0, values: 0, refs: 0, originalOffset: 0 };
  let lastByte = -1;

  const frameWritten = async (f: { raw: Buffer; firstPiece: number; pieces: number }, z: Buffer) => {
    const off = await append(z);
    frames.push({ fileOffset: off, compressedBytes: z.length, rawBytes: f.raw.length, firstPiece: f.firstPiece, pieces: f.pieces });
    await hook("ext-frame", frames.length);
  };

  // The writes, in order: block k's frames, then its record, then block k + 1's. A chain of
  // promises, so this thread looks up block k + 1's pieces while block k compresses and writes.
  let writing: Promise<void> = Promise.resolve();
  const quiet = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => undefined); // awaited later, in order; this only keeps an early failure from being "unhandled"
    return p;
  };

  const seal = async (d: ColumnsDone, inputBytes: number) => {
    const ids = idsOf(pack, d.pieces);
    // The frames this block filled go before its record (a reader finds pieces by the frame table, not by position).
    const filled = pack.full.splice(0).map((f) => ({ f, z: quiet(pool.compress(f.raw, PACK_LEVEL)) }));
    const record = quiet(pool.seal(d.job, ids, STREAM_LEVEL));
    const before = writing;
    writing = quiet((async () => {
      await before;
      for (const { f, z } of filled) await frameWritten(f, await z);
      const r = await record;
      const off = await append(r);
      blocks.push({ fileOffset: off, recordBytes: r.length, lines: d.lines, firstLine: res.lines, originalOffset: res.originalOffset, originalBytes: inputBytes });
      res.lines += d.lines;
      res.originalOffset += inputBytes;
      res.events += d.events;
      res.encoded += d.encodedLines;
      res.values += d.values;
      res.refs += ids.length;
      await hook("ext-block", blocks.length);
    })());
    // At most one block written behind the one looked up.
    await before;
  };

  const inFlight: { p: Promise<ColumnsDone>; bytes: number }[] = [];
  /** Submit a block to the column pass (`own`: its whole ArrayBuffer may be transferred). */
  const submit = async (input: Buffer, own: boolean) => {
    const bytes = input.length; // before the block is transferred to a worker
    inFlight.push({ p: quiet(pool.columns(input, STREAM_LEVEL, seed, own)), bytes });
    while (inFlight.length >= BLOCKS_IN_FLIGHT) {
      const next = inFlight.shift() as { p: Promise<ColumnsDone>; bytes: number };
      await seal(await next.p, next.bytes);
    }
  };

  try {
    // The journal is read into the buffer of the block being filled: a block is a view of it,
    // transferred to a worker as it is, and the few bytes read past its end move to the next
    // block's buffer (chunks concatenated, then copied out, cost two copies of every byte).
    const capacity = blockTarget + READ_SLACK;
    let buf = Buffer.allocUnsafeSlow(capacity);
    let len = 0;
    let pos = 0;
    for (;;) {
      if (len === buf.length) {
        // A line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
        buf.copy(bigger, 0, 0, len);
        buf = bigger;
      }
      const want = Math.min(buf.length - len, size - pos, len < blockTarget ? blockTarget - len + READ_SLACK : READ_SLACK);
      if (want <= 0) break;
      const { bytesRead } = await src.read(buf, len, want, pos);
      if (bytesRead === 0) break;
      sha.update(buf.subarray(len, len + bytesRead));
      lastByte = buf[len + bytesRead - 1];
      pos += bytesRead;
      len += bytesRead;
      // Cut every block the buffer holds: a block ends at the first newline from blockTarget - 1 on.
      let from = 0;
      while (len - from >= blockTarget) {
        const nl = buf.subarray(0, len).indexOf(0x0a, from + blockTarget - 1);
        if (nl < 0) break;
        const rest = len - (nl + 1);
        if (from === 0 && rest <= nl + 1) {
          const next = Buffer.allocUnsafeSlow(Math.max(capacity, 2 * rest));
          buf.copy(next, 0, nl + 1, len);
          await submit(buf.subarray(0, nl + 1), true);
          buf = next;
          len = rest;
        } else {
          // Many blocks in one buffer (small blocks): each is copied out.
          await submit(Buffer.from(buf.subarray(from, nl + 1)), false);
          from = nl + 1;
        }
      }
      if (from > 0) {
        buf.copy(buf, 0, from, len);
        len -= from;
      }
    }
    if (len > 0) await submit(buf.subarray(0, len), true);
    opts.onReadDone?.();
    while (inFlight.length > 0) {
      const next = inFlight.shift() as { p: Promise<ColumnsDone>; bytes: number };
      await seal(await next.p, next.bytes);
    }
    await writing;
    if (pack.pending.length > 0) {
      const f = pack.take();
      await frameWritten(f, await pool.compress(f.raw, PACK_LEVEL));
    }
  } finally {
    // Let any job still running settle before the pool goes away.
    await Promise.allSettled([...inFlight.map((x) => x.p), writing]);
    await pool.close();
  }
  const packTableOffset = at;
  const tables = Buffer.alloc(frames.length * FRAME_ENTRY_BYTES + blocks.length * BLOCK_ENTRY_BYTES);
  frames.forEach((f, k) => writeFrameEntry(f, tables, k * FRAME_ENTRY_BYTES));
  blocks.forEach((b, k) => writeBlockEntry(b, tables, frames.length * FRAME_ENTRY_BYTES + k * BLOCK_ENTRY_BYTES));
  await append(tables);
  await append(writeFooter({
    packTableOffset, blockTableOffset: packTableOffset + frames.length * FRAME_ENTRY_BYTES,
    frames: frames.length, blocks: blocks.length, version: FORMAT_VERSION,
  }));
  return {
    originalSha256: sha.digestHex(),
    originalBytes: res.originalOffset,
    lines: res.lines,
    endsWithNewline: res.originalOffset === 0 || lastByte === 0x0a,
    totalEvents: res.events,
    encodedLines: res.encoded,
    blocks: blocks.length,
    frames: frames.length,
    containerBytes: at,
    text: { values: res.values, refs: res.refs, unique: pack.nextId, uniqueBytes: pack.uniqueBytes },
  };
}
