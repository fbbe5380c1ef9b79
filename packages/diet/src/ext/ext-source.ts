/**
 * Reading an extended diet's container: the footer and tables (checked against the manifest), one
 * block record at a time, pack pieces through a small cache of decoded frames. Synchronous preads:
 * a one-line read touches a few KB of tables, one record and at most a few frames.
 *
 * Guarantees: every size and offset is checked before it is used to read or allocate (a lying
 * index is EXT_INDEX_INVALID, a short file EXT_TRUNCATED, a frame decoding to other than its
 * declared size EXT_BODY_SIZE, anything else that does not decode EXT_CORRUPT); never writes.
 */
import * as fs from "node:fs";
import { JournalError, type ExecLayout } from "@hankweave-journal/core";
import { openRegularSync } from "@hankweave-journal/journal";
import {
  BLOCK_ENTRY_BYTES, FOOTER_BYTES, FRAME_CACHE_BYTES, FRAME_ENTRY_BYTES, HEADER_BYTES, CONTAINER_MAGIC, PACK_FRAME_TARGET_BYTES, READ_VERSIONS,
  extError, readBlockTable, readFooter, readFrameTable,
  type BlockEntry, type ExtManifestInfo, type FrameEntry,
} from "./format.js";
import { Scratch, decodeBlockRange, freeKeptRegion, wholeDecodeBytes, type DecodedRange, type KernelFrames } from "./block-codec.js";
import { threadRebuilder, type WasmRebuilder } from "./rebuild-wasm.js";
import { zstdContentSize, zstdDecodeInto } from "./zstd.js";

/**
 * A decoded pack frame, `len` bytes at `addr` of `raw` (its own buffer, addr 0) or, raw null, of the
 * WebAssembly rebuilder's memory; piece starts are found lazily (a one-line read scans only up to its piece).
 */
interface CachedFrame {
  raw: Buffer | null;
  addr: number;
  len: number;
  /** In the rebuilder's memory: where all its piece starts are (the kernel's frame table points there), or -1. */
  startsAt: number;
  /** starts[j]: piece j's first byte (frame-relative), known for j < known; starts[pieces] = len once all are known. */
  starts: Int32Array;
  known: number;
}

/** The manifest fields the container is checked against. */
export interface ExtExpect {
  lines: number;
  originalBytes: number;
  endsWithNewline: boolean;
}

/** A decoded slice of a block: lines `firstLine`… as views of `data`, with their original offsets (absolute). */
export interface ExtLines extends DecodedRange {
  firstLine: number;
}

/** Read the manifest's `ext` key (null when the manifest is not an extended diet of this format). */
export function readExtInfo(manifestPath: string): ExtManifestInfo | null {
  let o: unknown;
  try {
    o = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch {
    return null; // the manifest's own reader reports what is wrong with it
  }
  return extInfoOfJson(o);
}

/** The `ext` key of a manifest already parsed from JSON (null when it is not an extended diet of this format). */
export function extInfoOfJson(o: unknown): ExtManifestInfo | null {
  const ext = (o as { ext?: unknown } | null)?.ext as ExtManifestInfo | undefined;
  if (typeof ext !== "object" || ext === null || ext.format !== "hwx-columnar") return null;
  return ext;
}

export class ExtSource {
  /**
   * Decoded pack frames by frame index, at most frameCacheBytes_ (and always the last one used);
   * `frameUsed[k]` orders them for eviction (an array and a counter: a frame switch, which most
   * blocks make tens of thousands of times, costs no Map reordering or allocation).
   */
  private readonly frameCache: (CachedFrame | undefined)[] = [];
  private readonly frameUsed: Float64Array;
  private readonly cachedFrames: number[] = [];
  private useClock = 0;
  private frameCacheBytes = 0;
  /** The frame of the last piece read: its index, first piece and end (-1: none). */
  private lastK = -1;
  private lastFirst = 0;
  private lastEnd = 0;
  private lastFr: CachedFrame | null = null;
  /** The answer of pieceBytes, reused (callers copy from it at once). */
  private readonly hit: { buf: Buffer; start: number; end: number } = { buf: Buffer.alloc(0), start: 0, end: 0 };
  /** The record being decoded and its streams (reused block after block); whole blocks in wasm mode: wscratch, in the rebuilder's memory. */
  private readonly scratch = new Scratch();
  private wscratch: Scratch | null = null;
  /** Buffers of evicted frames, reused by the next frames decoded (no garbage per frame). */
  private readonly spareFrames: ArrayBuffer[] = [];
  /** pieceBytes as one function for every decode (a new closure per block made the decoder's optimised code deoptimise: "wrong call target"). */
  private readonly pieceFn = (id: number) => this.pieceBytes(id);
  /** The compressed frame being decoded (reused). */
  private frameZ: Buffer = Buffer.alloc(0);
  /**
   * Set by the first whole-block decode: frames then live in this thread's WebAssembly memory,
   * where its rebuild kernel reads pieces without a copy (a one-line read never makes the module).
   */
  private wasm: WasmRebuilder | null = null;
  /** With `wasm`: the frame table the kernel reads pieces through (frames whose pieces all scanned). */
  private kframes: KernelFrames | null = null;
  private constructor(
    readonly path: string,
    private readonly fd: number,
    readonly fileBytes: number,
    readonly blocks: BlockEntry[],
    readonly frames: FrameEntry[],
    readonly expect: ExtExpect,
    readonly version: number,
    private readonly frameCacheBytes_: number,
  ) {
    this.frameUsed = new Float64Array(frames.length);
  }

  /**
   * Open `path` (default: the published container) and check its tables against `expect`.
   * `frameCacheBytes`: the decoded-frame cache's bound (tests make it small to exercise eviction).
   */
  static open(layout: ExecLayout, expect: ExtExpect, path: string = layout.dietedJournal, frameCacheBytes = FRAME_CACHE_BYTES): ExtSource {
    const fd = openRegularSync(path);
    try {
      const size = fs.fstatSync(fd).size;
      const head = Buffer.alloc(HEADER_BYTES);
      if (size < HEADER_BYTES + FOOTER_BYTES || fs.readSync(fd, head, 0, HEADER_BYTES, 0) !== HEADER_BYTES
        || head.readUInt32LE(0) !== CONTAINER_MAGIC) {
        throw extError("EXT_TRUNCATED", `${path} is not an extended diet container (no header)`, path, { actual: size });
      }
      const version = head.readUInt32LE(4);
      if (!READ_VERSIONS.includes(version)) throw extError("EXT_INDEX_INVALID", `unsupported container version ${version}`, path);
      const footer = readFooter(preadExact(fd, size - FOOTER_BYTES, FOOTER_BYTES, path), size, path);
      if (footer.version !== version) throw extError("EXT_INDEX_INVALID", `the header says version ${version}, the footer ${footer.version}`, path);
      const tables = preadExact(fd, footer.packTableOffset, size - FOOTER_BYTES - footer.packTableOffset, path);
      const frames = readFrameTable(tables.subarray(0, footer.frames * FRAME_ENTRY_BYTES), footer, path);
      const blocks = readBlockTable(tables.subarray(footer.frames * FRAME_ENTRY_BYTES, footer.frames * FRAME_ENTRY_BYTES + footer.blocks * BLOCK_ENTRY_BYTES), footer, expect.lines, expect.originalBytes, path);
      return new ExtSource(path, fd, size, blocks, frames, expect, version, frameCacheBytes);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  get lineCount(): number {
    return this.expect.lines;
  }

  /** Index of the block holding `line` (binary search), or -1 past the end. */
  blockOf(line: number): number {
    let lo = 0;
    let hi = this.blocks.length - 1;
    if (hi < 0 || line >= this.expect.lines || line < 0) return -1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.blocks[mid].firstLine <= line) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Lines `from`..`to` of block `k` (block-relative, inclusive), rebuilt and checked (from the nearest cursor snapshot). */
  decode(k: number, from = 0, to = Number.POSITIVE_INFINITY): ExtLines {
    const b = this.blocks[k];
    if (from <= 0 && to >= b.lines - 1) this.useWasmFrames();
    const record = this.readRecord(k, from <= 0 && to >= b.lines - 1);
    const r = decodeBlockRange(record, this.shapeOf(k), this.pieceFn, this.path, from, Math.min(to, b.lines - 1), { scratch: this.recordScratch, frames: this.kframes ?? undefined });
    for (let i = 0; i < r.offsets.length; i++) r.offsets[i] += b.originalOffset;
    return { ...r, firstLine: b.firstLine + Math.max(0, from) };
  }

  /**
   * Block k's record, read into the scratch memory (valid until the next decode): a whole block's
   * in wasm mode into the rebuilder's memory (the kernel reads its streams in place), a range's
   * into a plain buffer (its frame loads may move that memory while the JavaScript decoder reads).
   */
  private readRecord(k: number, whole = true): Buffer {
    const b = this.blocks[k];
    const s = whole && this.wscratch !== null ? this.wscratch : this.scratch;
    this.recordScratch = s;
    s.reset();
    if (s === this.wscratch) {
      // The stream table first: the scratch sized for the whole decode before any view of it exists.
      const need = this.recordHead(b);
      if (need !== null) s.fit(need);
    }
    return preadExact(this.fd, b.fileOffset, b.recordBytes, this.path, s.take(b.recordBytes));
  }

  /**
   * What decoding block `b` whole takes from the scratch, from its record's stream table (null when
   * the table does not read: the record's own read and decode then say what is wrong).
   */
  private recordHead(b: BlockEntry): number | null {
    const len = Math.min(b.recordBytes, this.headBuf.length);
    try {
      let head = preadExact(this.fd, b.fileOffset, len, this.path, this.headBuf.subarray(0, len));
      const table = len >= 8 ? 8 + 8 * head.readUInt32LE(4) : 0;
      if (table > len && table <= b.recordBytes) head = preadExact(this.fd, b.fileOffset, table, this.path);
      return wholeDecodeBytes(head, b.recordBytes);
    } catch {
      return null;
    }
  }

  /** A record's first bytes (its stream table: 8 bytes a stream), reused. */
  private readonly headBuf = Buffer.allocUnsafe(4096);

  /** The scratch memory the last record was read into (its streams go there too). */
  private recordScratch: Scratch = this.scratch;

  /** From now on decode frames into the WebAssembly rebuilder's memory (those cached so far are dropped). */
  private useWasmFrames(): void {
    if (this.wasm !== null) return;
    const w = threadRebuilder();
    if (w === null) return;
    this.dropFrames();
    this.wasm = w;
    this.wscratch = new Scratch(w);
    const n = this.frames.length;
    const table = w.alloc(16 * n);
    const firstPieces = w.alloc(4 * (n + 1));
    w.u8.fill(0, table, table + 16 * n);
    for (let k = 0; k < n; k++) w.i32[(firstPieces >> 2) + k] = this.frames[k].firstPiece;
    w.i32[(firstPieces >> 2) + n] = n === 0 ? 0 : this.frames[n - 1].firstPiece + this.frames[n - 1].pieces;
    this.kframes = { table, firstPieces, count: n };
  }

  /** Frame k was just used (the eviction order; in wasm mode the kernel's clock and table, which it updates too). */
  private touch(k: number): void {
    const t = this.kframes;
    if (t === null) this.frameUsed[k] = ++this.useClock;
    else {
      const f64 = (this.wasm as WasmRebuilder).f64;
      f64[1] += 1;
      f64[(t.table >> 3) + 2 * k + 1] = f64[1];
    }
  }

  private usedOf(k: number): number {
    const t = this.kframes;
    return t === null ? this.frameUsed[k] : (this.wasm as WasmRebuilder).f64[(t.table >> 3) + 2 * k + 1];
  }

  /** Frame k leaves the cache: out of the kernel's table, its memory given back. */
  private unload(k: number, fr: CachedFrame): void {
    const w = this.wasm;
    if (fr.raw !== null || w === null) return;
    if (this.kframes !== null) w.i32[(this.kframes.table >> 2) + 4 * k] = 0;
    w.free(fr.addr);
    if (fr.startsAt >= 0) w.free(fr.startsAt);
  }

  private dropFrames(): void {
    for (const k of this.cachedFrames) {
      this.unload(k, this.frameCache[k] as CachedFrame);
      this.frameCache[k] = undefined;
    }
    this.cachedFrames.length = 0;
    this.frameCacheBytes = 0;
    this.spareFrames.length = 0;
    this.lastK = -1;
    this.lastFr = null;
  }

  private shapeOf(k: number) {
    const b = this.blocks[k];
    return { lines: b.lines, originalBytes: b.originalBytes, lastUnterminated: !this.terminated(b.firstLine + b.lines - 1), version: this.version };
  }

  /** False only for the journal's unterminated final fragment. */
  terminated(line: number): boolean {
    return this.expect.endsWithNewline || line !== this.expect.lines - 1;
  }

  /** The bytes of pack piece `id` (a view into its decoded frame; the object is reused by the next call). */
  pieceBytes(id: number): { buf: Buffer; start: number; end: number } {
    // Most references fall in the frame of the previous one: no search, no cache bookkeeping.
    let fr = this.lastFr;
    let first = this.lastFirst;
    if (fr === null || id < first || id >= this.lastEnd) {
      const k = this.frameOfPiece(id);
      fr = this.frameCache[k] ?? null;
      if (fr === null) {
        fr = this.loadFrame(k);
        this.frameCache[k] = fr;
        this.cachedFrames.push(k);
        this.frameCacheBytes += fr.len;
        this.evictFrames(k);
      }
      this.touch(k);
      const f = this.frames[k];
      first = f.firstPiece;
      this.lastK = k;
      this.lastFr = fr;
      this.lastFirst = first;
      this.lastEnd = first + f.pieces;
    }
    const j = id - first;
    if (fr.known < j + 2) this.scanPieces(this.lastK, fr, j + 2);
    const hit = this.hit;
    hit.buf = fr.raw ?? (this.wasm as WasmRebuilder).buf;
    hit.start = fr.addr + fr.starts[j];
    hit.end = fr.addr + fr.starts[j + 1] - 1;
    return hit;
  }

  /** The index of the frame holding piece `id` (binary search); EXT_INDEX_INVALID when none does. */
  private frameOfPiece(id: number): number {
    let lo = 0;
    let hi = this.frames.length - 1;
    if (hi < 0) throw extError("EXT_INDEX_INVALID", `piece ${id} is referenced but the pack is empty`, this.path);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.frames[mid].firstPiece <= id) lo = mid;
      else hi = mid - 1;
    }
    const f = this.frames[lo];
    if (id < f.firstPiece || id >= f.firstPiece + f.pieces) throw extError("EXT_INDEX_INVALID", `piece ${id} is not in the pack`, this.path);
    return lo;
  }

  /** Evict the least recently used frames (never `keep`) until the cache is within its bound; their buffers are kept for reuse. */
  private evictFrames(keep: number): void {
    while (this.frameCacheBytes > this.frameCacheBytes_ && this.cachedFrames.length > 1) {
      let at = -1;
      for (let i = 0; i < this.cachedFrames.length; i++) {
        const k = this.cachedFrames[i];
        if (k !== keep && (at < 0 || this.usedOf(k) < this.usedOf(this.cachedFrames[at]))) at = i;
      }
      const k = this.cachedFrames[at];
      this.cachedFrames.splice(at, 1);
      const old = this.frameCache[k] as CachedFrame;
      this.frameCache[k] = undefined;
      this.frameCacheBytes -= old.len;
      if (old.raw === null) this.unload(k, old);
      else if (this.spareFrames.length < SPARE_FRAMES) this.spareFrames.push(old.raw.buffer as ArrayBuffer);
    }
  }

  /** Find the starts of frame `k`'s pieces up to index `upTo` − 1 (starts[pieces] is the frame's end). */
  private scanPieces(k: number, fr: CachedFrame, upTo: number): void {
    const pieces = fr.starts.length - 1;
    const buf = fr.raw ?? (this.wasm as WasmRebuilder).buf;
    const { addr, len } = fr;
    let at = fr.starts[fr.known - 1];
    for (let j = fr.known - 1; j < upTo - 1; j++) {
      const nl = buf.indexOf(0x0a, addr + at) - addr;
      if (nl < 0 || nl >= len) throw extError("EXT_CORRUPT", `pack frame ${k} holds fewer pieces than its index's ${pieces}`, this.path);
      at = nl + 1;
      fr.starts[j + 1] = at;
    }
    fr.known = upTo;
    if (upTo === pieces + 1 && at !== len) throw extError("EXT_CORRUPT", `pack frame ${k} holds more than its index's ${pieces} pieces`, this.path);
  }

  /** The text of pack piece `id`. */
  piece(id: number): string {
    const p = this.pieceBytes(id);
    return p.buf.toString("utf8", p.start, p.end);
  }

  private loadFrame(k: number): CachedFrame {
    const f = this.frames[k];
    if (this.frameZ.length < f.compressedBytes) this.frameZ = Buffer.allocUnsafeSlow(Math.max(f.compressedBytes, 2 * this.frameZ.length, 256 * 1024));
    const z = preadExact(this.fd, f.fileOffset, f.compressedBytes, this.path, this.frameZ.subarray(0, f.compressedBytes));
    // In the rebuilder's memory: 16 bytes of slack after the frame (its kernel reads 16 at a time).
    const w = this.wasm;
    const addr = w === null ? 0 : w.alloc(f.rawBytes + 16);
    const raw = w === null ? this.frameBuffer(f.rawBytes) : Buffer.from(w.u8.buffer, addr, f.rawBytes);
    if (!zstdDecodeInto(z, raw)) {
      if (w !== null) w.free(addr);
      const declared = zstdContentSize(z);
      if (declared !== null && declared !== f.rawBytes) {
        throw extError("EXT_BODY_SIZE", `pack frame ${k} holds ${declared} bytes, its index declares ${f.rawBytes}`, this.path, { expected: f.rawBytes, actual: declared });
      }
      throw extError("EXT_CORRUPT", `pack frame ${k} does not decode`, this.path);
    }
    const starts = new Int32Array(f.pieces + 1);
    const fr: CachedFrame = { raw: w === null ? raw : null, addr, len: f.rawBytes, startsAt: -1, starts, known: 1 };
    const t = this.kframes;
    if (w !== null && t !== null) {
      // All its piece starts now (in the kernel), so the kernel reads its pieces without a call; a
      // frame holding another number of pieces stays with the lazy scan, which says so when it gets there.
      const sa = w.alloc(4 * (f.pieces + 1));
      if (w.starts(addr, f.rawBytes, sa, f.pieces)) {
        starts.set(w.i32.subarray(sa >> 2, (sa >> 2) + f.pieces + 1));
        fr.known = f.pieces + 1;
        fr.startsAt = sa;
        w.i32[(t.table >> 2) + 4 * k] = addr;
        w.i32[(t.table >> 2) + 4 * k + 1] = sa;
      } else w.free(sa);
    }
    return fr;
  }

  /** `size` bytes for a decoded frame: a spare frame's buffer when one is large enough, else a new one (with room for the next frames). */
  private frameBuffer(size: number): Buffer {
    for (let i = 0; i < this.spareFrames.length; i++) {
      const ab = this.spareFrames[i];
      if (ab.byteLength >= size) {
        this.spareFrames.splice(i, 1);
        return Buffer.from(ab, 0, size);
      }
    }
    return Buffer.from(new ArrayBuffer(Math.max(size, FRAME_BUFFER_BYTES)), 0, size);
  }

  /**
   * Block `k` rebuilt whole, as its original bytes, with each line's end offset (relative to the
   * block). `out`: a buffer to rebuild into when it is large enough (data is then a view of it).
   * `keep`: where the kernel rebuilds the block, `data` is a view of this thread's rebuilder memory
   * at `region` (≥ 0), allocated until the caller gives it to `freeRegion`; -1: a buffer of its own.
   */
  decodeBytes(k: number, out?: Buffer, keep = false): { data: Buffer; ends: Int32Array; region: number } {
    this.useWasmFrames();
    const record = this.readRecord(k);
    return decodeBlockRange(record, this.shapeOf(k), this.pieceFn, this.path, 0, Number.POSITIVE_INFINITY, { scratch: this.recordScratch, out, frames: this.kframes ?? undefined, keep });
  }

  /** A region `decodeBytes(k, out, true)` answered is no longer used. */
  freeRegion(region: number): void {
    freeKeptRegion(region);
  }

  close(): void {
    this.dropFrames();
    this.wscratch?.release();
    if (this.kframes !== null) {
      this.wasm?.free(this.kframes.table);
      this.wasm?.free(this.kframes.firstPieces);
      this.kframes = null;
    }
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
  }
}


/** Evicted frame buffers kept for reuse. */
const SPARE_FRAMES = 8;
/** A frame buffer's least size: frames are cut once they hold PACK_FRAME_TARGET_BYTES, so most are a little above it. */
const FRAME_BUFFER_BYTES = PACK_FRAME_TARGET_BYTES + 128 * 1024;

function preadExact(fd: number, position: number, length: number, path: string, into?: Buffer): Buffer {
  const b = into ?? Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    let n: number;
    try {
      n = fs.readSync(fd, b, got, length - got, position + got);
    } catch (e) {
      throw new JournalError("IO_ERROR", `cannot read ${path}: ${(e as Error).message}`, { path }, { cause: e });
    }
    if (n === 0) throw extError("EXT_TRUNCATED", `${path} ends before byte ${position + length}`, path, { expected: position + length, actual: position + got });
    got += n;
  }
  return b;
}
