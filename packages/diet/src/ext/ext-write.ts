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
import { sealBlock, textStreams, type ColumnBlock, type PieceStore } from "./block-codec.js";
import { zstdCompress } from "./zstd.js";
import { ColumnPool } from "./column-pool.js";

/** Blocks read ahead of the one being sealed (each up to BLOCK_TARGET_BYTES plus one line). */
const BLOCKS_IN_FLIGHT = 3;
const READ_CHUNK = 4 * 1024 * 1024;

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

/**
 * The pack being written: piece → id, for the pieces inside the reference window only (a piece
 * whose first byte is more than `window` pool bytes behind the pool's end is forgotten, and stored
 * again if seen again), so memory and a decoder's cache stay bounded by the window.
 */
class Pack implements PieceStore {
  readonly ids = new Map<string, { id: number; at: number }>();
  /** The pieces still in the map, oldest first (a queue: `inWindow[head]` is the oldest). */
  private readonly inWindow: { piece: string; id: number; at: number }[] = [];
  private head = 0;
  pending: string[] = [];
  pendingBytes = 0;
  firstPending = 0;
  uniqueBytes = 0;
  nextId = 0;
  poolBytes = 0;

  /** Frames filled while a block's text was encoded, waiting to be written (in piece order). */
  readonly full: { raw: Buffer; firstPiece: number; pieces: number }[] = [];

  constructor(private readonly window: number, private readonly frameTarget: number) {}

  idOf(piece: string): number {
    const known = this.ids.get(piece);
    if (known !== undefined && this.poolBytes - known.at <= this.window) return known.id;
    const id = this.nextId++;
    const e = { id, at: this.poolBytes };
    this.ids.set(piece, e);
    this.inWindow.push({ piece, ...e });
    const bytes = Buffer.byteLength(piece) + 1;
    this.poolBytes += bytes;
    this.pending.push(piece);
    this.pendingBytes += bytes;
    this.uniqueBytes += bytes;
    if (this.pendingBytes >= this.frameTarget) this.full.push(this.take());
    // Forget what left the window.
    while (this.head < this.inWindow.length && this.poolBytes - this.inWindow[this.head].at > this.window) {
      const old = this.inWindow[this.head++];
      if (this.ids.get(old.piece)?.id === old.id) this.ids.delete(old.piece);
    }
    if (this.head > 4096 && this.head * 2 > this.inWindow.length) {
      this.inWindow.splice(0, this.head);
      this.head = 0;
    }
    return id;
  }

  /** Take the pending pieces as one frame's raw bytes. */
  take(): { raw: Buffer; firstPiece: number; pieces: number } {
    const raw = Buffer.from(`${this.pending.join("\n")}\n`, "utf8");
    const out = { raw, firstPiece: this.firstPending, pieces: this.pending.length };
    this.firstPending += this.pending.length;
    this.pending = [];
    this.pendingBytes = 0;
    return out;
  }
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

  const flushFrame = async (f: { raw: Buffer; firstPiece: number; pieces: number }) => {
    const z = zstdCompress(f.raw, PACK_LEVEL);
    const off = await append(z);
    frames.push({ fileOffset: off, compressedBytes: z.length, rawBytes: f.raw.length, firstPiece: f.firstPiece, pieces: f.pieces });
    await hook("ext-frame", frames.length);
  };

  const seal = async (c: ColumnBlock, inputBytes: number) => {
    const t = textStreams(c.texts, pack, c.snapTexts);
    // The frames this block filled, before its record (a reader finds pieces by the frame table, not by position).
    for (const f of pack.full.splice(0)) await flushFrame(f);
    const record = sealBlock(c, t, STREAM_LEVEL);
    const off = await append(record);
    blocks.push({ fileOffset: off, recordBytes: record.length, lines: c.lines, firstLine: res.lines, originalOffset: res.originalOffset, originalBytes: inputBytes });
    res.lines += c.lines;
    res.originalOffset += inputBytes;
    res.events += c.events;
    res.encoded += c.encodedLines;
    res.values += c.texts.length;
    res.refs += t.refs;
    await hook("ext-block", blocks.length);
  };

  const inFlight: { p: Promise<ColumnBlock>; bytes: number }[] = [];
  const submit = async (input: Buffer) => {
    inFlight.push({ p: pool.columns(input, STREAM_LEVEL), bytes: input.length });
    while (inFlight.length >= BLOCKS_IN_FLIGHT) {
      const next = inFlight.shift() as { p: Promise<ColumnBlock>; bytes: number };
      await seal(await next.p, next.bytes);
    }
  };

  try {
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let pos = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(READ_CHUNK, Math.max(0, size - pos)));
      const { bytesRead } = buf.length === 0 ? { bytesRead: 0 } : await src.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      sha.update(chunk);
      lastByte = chunk[chunk.length - 1];
      pos += bytesRead;
      carry.push(chunk);
      carryBytes += bytesRead;
      while (carryBytes >= blockTarget) {
        const all = carry.length === 1 ? carry[0] : Buffer.concat(carry);
        const nl = all.indexOf(0x0a, blockTarget - 1);
        if (nl < 0) {
          carry = [all];
          break;
        }
        // A copy: the block is transferred to a worker, the rest stays here.
        const block = Buffer.from(all.subarray(0, nl + 1));
        const rest = all.subarray(nl + 1);
        carry = rest.length > 0 ? [rest] : [];
        carryBytes = rest.length;
        await submit(block);
      }
    }
    if (carryBytes > 0) await submit(Buffer.from(carry.length === 1 ? carry[0] : Buffer.concat(carry)));
    while (inFlight.length > 0) {
      const next = inFlight.shift() as { p: Promise<ColumnBlock>; bytes: number };
      await seal(await next.p, next.bytes);
    }
    if (pack.pending.length > 0) await flushFrame(pack.take());
  } finally {
    // Let any column pass still running settle before the pool goes away.
    await Promise.allSettled(inFlight.map((x) => x.p));
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
