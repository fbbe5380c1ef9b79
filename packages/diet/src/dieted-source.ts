/**
 * The dieted journal as a source of original lines, for the three kinds of `events.jsonl.zst`:
 * - ours in one zstd frame (the default, format §5.1): the manifest's frame index cuts the one
 *   frame into blocks by their `pointerBytes`; reaching line N decodes the stream up to its block
 *   (one input chunk and one block held);
 * - ours seekable (`--seekable`, and manifests written before 2026-12-01): one frame decompressed
 *   per random access, found through the seek table;
 * - a foreign one written by the reference runtime (no frame index in its manifest): decompressed
 *   whole, bounded by FOREIGN_MAX_BYTES, pointers looked for only at the two body sites.
 *
 * Every yielded line carries its original bytes (pointers rehydrated from verified CAS bodies)
 * and its original offset. A missing or corrupt body throws; nothing is ever partially yielded.
 */
import { closeSync, fstatSync } from "node:fs";
import { JournalError, isSha256Hex, type ExecLayout } from "@hankweave-journal/core";
import {
  OneFrameReader, decompressLimitFor, decompressZstd, readExactlySync, readSeekTableSync, type SeekTable,
} from "@hankweave-journal/cas";
import { openRegularSync } from "@hankweave-journal/journal";
import { checkRewritten, type DietManifest, type FrameIndexEntry } from "./manifest.js";
import { BodyCache } from "./body-cache.js";
import { POINTER_MARKER, findPointerCandidates, findPointers, spliceBodyBytes, type PointerSpan } from "./rehydrate.js";
import { compatibleSiteContainer, isCasShaped } from "./body-sites.js";

/** A foreign `.zst` (no seek table) is decompressed in memory whole: refused above this size. */
export const FOREIGN_MAX_BYTES = 512 * 1024 * 1024;
const NEWLINE = 10;

/** One line of a dieted journal before rehydration. */
export interface PointerLine {
  line: number;
  /** Original offset. */
  offset: number;
  /** Pointer bytes (equal to the original bytes unless `rewritten`). */
  pointer: Buffer;
  rewritten: boolean;
  /** Original length without the `\n` (known without CAS reads). */
  originalLength: number;
  terminated: boolean;
  /** The pointer spans to rehydrate, when only some of the line's pointer-shaped spans are pointers (a runtime-made diet). */
  spans?: PointerSpan[];
}

function mismatch(what: string, expected: unknown, actual: unknown): JournalError {
  return new JournalError("MANIFEST_MISMATCH", what, { expected, actual });
}

/** An open dieted journal. */
export class DietedSource {
  private foreign: { data: Buffer; lines: PointerLine[] } | null = null;

  private constructor(
    readonly layout: ExecLayout,
    readonly manifest: DietManifest,
    private readonly fd: number,
    readonly zstBytes: number,
    private readonly table: SeekTable | null,
    readonly bodies: BodyCache,
  ) {}

  /** Open `zstPath` described by `manifest`. Throws ZSTD_CORRUPT / MANIFEST_INVALID when they disagree. */
  static async open(layout: ExecLayout, manifest: DietManifest, zstPath: string = layout.dietedJournal): Promise<DietedSource> {
    // Synchronous open, stat and seek-table reads: a handful of small calls on a cached file cost
    // microseconds each, where every threadpool round trip costs far more on a loaded machine
    // (this is most of the open cost of a one-line read).
    const fd = openRegularSync(zstPath);
    try {
      const size = fstatSync(fd).size;
      if (size === 0) throw new JournalError("ZSTD_CORRUPT", `${zstPath} is empty (0 bytes)`, { path: zstPath });
      if (manifest.frames !== undefined && manifest.framing === "one-frame") {
        return new DietedSource(layout, manifest, fd, size, null, new BodyCache(layout));
      }
      const table = readSeekTableSync(fd, size);
      if (manifest.frames !== undefined) {
        if (table === null) {
          throw new JournalError("ZSTD_CORRUPT", `${zstPath} has no valid seek table but its manifest indexes frames (truncated?)`, { path: zstPath });
        }
        if (table.entries.length !== manifest.frames.length) {
          throw new JournalError("MANIFEST_INVALID", `manifest indexes ${manifest.frames.length} frames, the seek table ${table.entries.length}`, { path: layout.manifest });
        }
      }
      return new DietedSource(layout, manifest, fd, size, manifest.frames ? table : null, new BodyCache(layout));
    } catch (e) {
      closeSync(fd);
      throw e;
    }
  }

  /**
   * A source without a file, for rehydrating blocks decoded elsewhere (`rehydrateBlock`): the
   * diet's in-step verification, whose `manifest.frames` grows as the blocks are written.
   */
  static forBlocks(layout: ExecLayout, frames: FrameIndexEntry[]): DietedSource {
    // Only the frame index is read by the block methods; the rest of a manifest is not known yet.
    const manifest = { frames, framing: "one-frame" } as DietManifest;
    const src = new DietedSource(layout, manifest, -1, 0, null, new BodyCache(layout));
    src.closed = true;
    return src;
  }

  /**
   * The original bytes of block (or frame) `k` from its decoded pointer bytes `data`: checked
   * against the index and rehydrated from verified CAS bodies, as `originalParts` yields them.
   */
  async rehydrateBlock(k: number, data: Buffer): Promise<Buffer[]> {
    const prepared = await this.prepareBlock(k, data);
    return prepared.lines === null ? [data] : this.spliceFrame(k, prepared);
  }

  /** The seek table of our seekable pointer journal (null for a foreign `.zst`). */
  get seekTable(): SeekTable | null {
    return this.table;
  }

  /** The open descriptor of the `.zst` (read with `pread` by the restore workers until `close`). */
  get descriptor(): number {
    return this.liveFd();
  }

  /** True when we can decompress a single frame to reach a line. */
  get seekable(): boolean {
    return this.table !== null;
  }

  /** True for our one-frame pointer journal (blocks reached by decoding the stream from the start). */
  get oneFrame(): boolean {
    return this.manifest.frames !== undefined && this.manifest.framing === "one-frame";
  }

  /** A streaming decoder of the one-frame pointer journal from its start. */
  private oneFrameReader(): OneFrameReader {
    return new OneFrameReader(this.liveFd(), this.zstBytes, this.layout.dietedJournal);
  }

  /** Decode (and drop) the blocks before `k` of a one-frame reader at block 0. */
  private skipBlocks(r: OneFrameReader, k: number): void {
    const frames = this.manifest.frames!;
    let n = 0;
    for (let i = 0; i < k; i++) n += frames[i].pointerBytes!;
    if (n > 0) r.skip(n, Buffer.allocUnsafe(Math.min(n, SKIP_SCRATCH_BYTES)));
  }

  /** The next block (`k`) of a one-frame reader, in a buffer of exactly its size (a view of `into` when it is large enough). */
  private nextBlock(r: OneFrameReader, k: number, into?: Buffer): Buffer {
    const size = this.manifest.frames![k].pointerBytes!;
    const data = into !== undefined && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafe(size);
    r.readInto(data);
    return data;
  }

  /** Count of newline-terminated lines, when known without a scan. */
  get lineCount(): number | null {
    if (this.manifest.lines !== undefined) return this.manifest.lines - (this.manifest.endsWithNewline === false ? 1 : 0);
    if (this.foreign) return this.foreign.lines.filter((l) => l.terminated).length;
    return null;
  }

  private closed = false;

  /** The descriptor, refused after close (a closed number may already name another file). */
  private liveFd(): number {
    if (this.closed) throw new JournalError("IO_ERROR", "the dieted journal was closed", { path: this.layout.dietedJournal });
    return this.fd;
  }

  async close(): Promise<void> {
    if (this.closed || this.fd < 0) return;
    this.closed = true;
    closeSync(this.fd);
  }

  /** The decompressed pointer bytes of frame `k`. */
  async framePointerBytes(k: number): Promise<Buffer> {
    const table = this.table!;
    const e = table.entries[k];
    const compressed = readExactlySync(this.liveFd(), e.compressedSize, table.offsets[k]);
    return decompressZstd(compressed, { maxBytes: decompressLimitFor(e.decompressedSize), expectedBytes: e.decompressedSize });
  }

  private checked: Uint8Array | null = null;

  /** Check frame `k`'s rewritten list once (MANIFEST_INVALID); see `checkRewritten`. */
  checkFrame(k: number): void {
    const frames = this.manifest.frames!;
    this.checked ??= new Uint8Array(frames.length);
    if (this.checked[k] === 1) return;
    checkRewritten(frames[k], k, this.layout.manifest);
    this.checked[k] = 1;
  }

  /** Index of the frame holding `line` (binary search), or -1 past the end. */
  frameOfLine(line: number): number {
    const frames = this.manifest.frames!;
    let lo = 0;
    let hi = frames.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const f = frames[mid];
      if (line < f.firstLine) hi = mid - 1;
      else if (line >= f.firstLine + f.lines) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /**
   * Split one decompressed frame into pointer lines: all of them, only the rewritten ones (in
   * manifest order: restore needs nothing else), or only line `pick` of the frame. The whole
   * frame is walked and checked against its index whatever is materialised.
   */
  private frameLines(k: number, data: Buffer, pick: "all" | "rewritten" | number = "all"): PointerLine[] {
    const frames = this.manifest.frames!;
    const f: FrameIndexEntry = frames[k];
    this.checkFrame(k);
    const rw = f.rewritten;
    const out: PointerLine[] = [];
    let r = 0;
    let from = 0;
    let offset = f.originalOffset;
    for (let i = 0; i < f.lines; i++) {
      const nl = data.indexOf(NEWLINE, from);
      const end = nl < 0 ? data.length : nl;
      if (nl < 0 && (i !== f.lines - 1 || k !== frames.length - 1)) {
        throw mismatch(`frame ${k} holds fewer lines than its index says`, f.lines, i);
      }
      // The manifest's rewritten indexes are validated strictly increasing: a cursor suffices
      // (`rw` is flat: index, length, index, length, …).
      const rewritten = r < rw.length && rw[r] === i;
      const originalLength = rewritten ? rw[r + 1] : end - from;
      if (rewritten) r += 2;
      if (pick === "all" || (pick === "rewritten" ? rewritten : i === pick)) {
        out.push({ line: f.firstLine + i, offset, pointer: data.subarray(from, end), rewritten, originalLength, terminated: nl >= 0 });
      }
      offset += originalLength + (nl >= 0 ? 1 : 0);
      from = end + 1;
    }
    if (from < data.length) throw mismatch(`frame ${k} holds more bytes than its lines`, data.length, from);
    if (offset !== f.originalOffset + f.originalBytes) throw mismatch(`frame ${k} covers other original bytes than indexed`, f.originalBytes, offset - f.originalOffset);
    return out;
  }

  /** The foreign path: the whole file decompressed once, lines with pointers rehydrated. */
  private async loadForeign(): Promise<PointerLine[]> {
    if (this.foreign) return this.foreign.lines;
    const compressed = readExactlySync(this.liveFd(), this.zstBytes, 0);
    const data = await decompressZstd(compressed, { maxBytes: FOREIGN_MAX_BYTES });
    const lines: PointerLine[] = [];
    let from = 0;
    let offset = 0;
    while (from < data.length) {
      const nl = data.indexOf(NEWLINE, from);
      const end = nl < 0 ? data.length : nl;
      const pointer = data.subarray(from, end);
      // Only the contentRef at a compatible body site is a pointer (format §5.1); the unterminated
      // final fragment is never one (the runtime's reader emits it verbatim).
      const spans = nl >= 0 ? foreignSpans(pointer) : null;
      const rewritten = spans !== null;
      let originalLength = pointer.length;
      if (spans !== null) {
        // Lengths of rehydrated lines need the bodies: the foreign path reads them eagerly.
        originalLength = (await this.rehydrate(pointer, undefined, spans)).length;
      }
      lines.push({ line: lines.length, offset, pointer, rewritten, originalLength, terminated: nl >= 0, ...(spans ? { spans } : {}) });
      offset += originalLength + (nl >= 0 ? 1 : 0);
      from = end + 1;
    }
    if (offset !== this.manifest.originalBytes) throw mismatch("rehydrated size differs from originalBytes", this.manifest.originalBytes, offset);
    this.foreign = { data, lines };
    return lines;
  }

  /** Original bytes of a pointer line (CAS bodies read lazily and verified). */
  async rehydrate(pointer: Buffer, expectedLength?: number, only?: PointerSpan[]): Promise<Buffer> {
    const spans = only ?? findPointers(pointer.toString("latin1"));
    if (spans.length === 0) throw mismatch("a rewritten line holds no contentRef", ">= 1", 0);
    const bodies = new Map<string, Buffer>();
    for (const s of spans) if (!bodies.has(s.sha256)) bodies.set(s.sha256, await this.bodies.get(s.sha256, s.bytes));
    const out = spliceBodyBytes(pointer, (sha) => bodies.get(sha)!, spans);
    if (expectedLength !== undefined && out.length !== expectedLength) {
      throw mismatch("a rehydrated line has another length than the manifest says", expectedLength, out.length);
    }
    return out;
  }

  /** Pointer lines in [from, to], frame by frame (one frame in memory at a time). */
  async *pointerLines(from = 0, to = Number.POSITIVE_INFINITY): AsyncGenerator<PointerLine> {
    if (!this.table && !this.oneFrame) {
      for (const l of await this.loadForeign()) {
        if (l.line < from) continue;
        if (l.line > to) return;
        yield l;
      }
      return;
    }
    const frames = this.manifest.frames!;
    let k = from === 0 ? 0 : this.frameOfLine(from);
    if (k < 0 || k >= frames.length) return;
    if (this.oneFrame) {
      // Decode the stream up to the first wanted block, then block by block.
      const r = this.oneFrameReader();
      this.skipBlocks(r, k);
      for (; k < frames.length && frames[k].firstLine <= to; k++) {
        const data = this.nextBlock(r, k);
        const lines = from === to ? this.frameLines(k, data, from - frames[k].firstLine) : this.frameLines(k, data);
        for (const l of lines) {
          if (l.line < from) continue;
          if (l.line > to) return;
          yield l;
        }
      }
      return;
    }
    if (from === to) {
      // One line (getLine): one frame, one line materialised.
      const [l] = this.frameLines(k, await this.framePointerBytes(k), from - frames[k].firstLine);
      if (l !== undefined) yield l;
      return;
    }
    let next: Promise<Buffer> | null = this.framePointerBytes(k);
    for (; k < frames.length && frames[k].firstLine <= to; k++) {
      const data = await next!;
      next = k + 1 < frames.length && frames[k + 1].firstLine <= to ? this.framePointerBytes(k + 1) : null;
      next?.catch(() => undefined);
      for (const l of this.frameLines(k, data)) {
        if (l.line < from) continue;
        if (l.line > to) return;
        yield l;
      }
    }
  }

  /** Original bytes of line `l` (rehydrated when rewritten). */
  async originalBytes(l: PointerLine): Promise<Buffer> {
    return l.rewritten ? this.rehydrate(l.pointer, this.manifest.frames ? l.originalLength : undefined, l.spans) : l.pointer;
  }

  /**
   * The original file as a sequence of buffers (one per frame), every body verified. Used by
   * verify-from-disk and restore; memory is a few frames plus their bodies.
   */
  async *originalChunks(): AsyncGenerator<Buffer> {
    for await (const parts of this.originalParts()) yield parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /**
   * The original file as one array of buffers per frame (views of the decompressed frame and the
   * cached escaped bodies: nothing is copied), every body verified and every rehydrated line's
   * length checked against the manifest. A frame without rewritten lines is yielded as is.
   * Up to PREFETCH_FRAMES frames ahead are decompressed and have their bodies read (and verified)
   * on the threadpool while the caller hashes and writes the current one. `fromFrame` starts at
   * that frame (the restore's fast path hands over the frames it could not do).
   */
  async *originalParts(fromFrame = 0): AsyncGenerator<Buffer[]> {
    if (!this.table && !this.oneFrame) {
      const parts: Buffer[] = [];
      for (const l of await this.loadForeign()) {
        parts.push(await this.originalBytes(l));
        if (l.terminated) parts.push(Buffer.from([NEWLINE]));
      }
      yield [Buffer.concat(parts)];
      return;
    }
    const frames = this.manifest.frames!;
    if (this.oneFrame) {
      // One stream, decoded ahead by originalBlocks; nothing is released, so no buffer is reused
      // (the caller may keep the parts).
      for await (const block of this.originalBlocks(fromFrame)) yield block.parts;
      return;
    }
    const ahead: Promise<PreparedFrame>[] = [];
    let nextToPrepare = fromFrame;
    const fill = (): void => {
      while (ahead.length < PREFETCH_FRAMES && nextToPrepare < frames.length) {
        const p = this.prepareFrame(nextToPrepare++);
        p.catch(() => undefined);
        ahead.push(p);
      }
    };
    fill();
    for (let k = fromFrame; k < frames.length; k++) {
      const prepared = await ahead.shift()!;
      fill();
      yield prepared.lines === null ? [prepared.data] : this.spliceFrame(k, prepared);
    }
  }

  /**
   * `originalParts` with a release protocol: each block's parts come with `release`, to be called
   * once they were written and hashed; for the one-frame journal the block's buffer is then reused
   * for a later block (a fresh ~2 MiB buffer per block kept V8's GC busy: 231 ms per 100 MB). A
   * part must not be used after its `release`.
   */
  async *originalBlocks(fromFrame = 0): AsyncGenerator<{ parts: Buffer[]; release: (() => void) | null }> {
    if (!this.oneFrame) {
      for await (const parts of this.originalParts(fromFrame)) yield { parts, release: null };
      return;
    }
    const frames = this.manifest.frames!;
    const free: Buffer[] = [];
    // Buffers that fit every block up to BLOCK_BUFFER_BYTES (a larger block gets one of its own, not kept).
    let capacity = 0;
    for (let i = fromFrame; i < frames.length; i++) capacity = Math.max(capacity, Math.min(frames[i].pointerBytes!, BLOCK_BUFFER_BYTES));
    const r = this.oneFrameReader();
    this.skipBlocks(r, fromFrame);
    const prepare = (k: number): Promise<PreparedFrame> | null => {
      if (k >= frames.length) return null;
      const size = frames[k].pointerBytes!;
      let buf = free.pop();
      if (buf !== undefined && buf.length < size) buf = undefined;
      const p = this.prepareBlock(k, this.nextBlock(r, k, buf ?? Buffer.allocUnsafe(Math.max(size, capacity))));
      p.catch(() => undefined);
      return p;
    };
    let next = prepare(fromFrame);
    for (let k = fromFrame; k < frames.length; k++) {
      const prepared = await next!;
      next = prepare(k + 1);
      const parts = prepared.lines === null ? [prepared.data] : this.spliceFrame(k, prepared);
      const backing = Buffer.from(prepared.data.buffer, prepared.data.byteOffset, (prepared.data.buffer as ArrayBuffer).byteLength - prepared.data.byteOffset);
      let released = false;
      yield {
        parts,
        release: () => {
          if (released) return;
          released = true;
          if (free.length < BLOCK_BUFFERS_KEPT && backing.length <= Math.max(capacity, BLOCK_BUFFER_BYTES)) free.push(backing);
        },
      };
    }
    r.end();
  }

  /** Decompress frame `k`; when it has rewritten lines, split it and read its bodies. */
  private async prepareFrame(k: number): Promise<PreparedFrame> {
    return this.prepareBlock(k, await this.framePointerBytes(k));
  }

  /** Frame (or block) `k`'s decompressed `data`, split and with its bodies read when it has rewritten lines. */
  private async prepareBlock(k: number, data: Buffer): Promise<PreparedFrame> {
    const f = this.manifest.frames![k];
    if (f.rewritten.length === 0) return { data, lines: null, spans: [], bodies: new Map() };
    const lines = this.frameLines(k, data, "rewritten");
    const spans = lines.map((l) => findPointers(l.pointer.toString("latin1")));
    const wanted = new Map<string, number>();
    for (const list of spans) for (const s of list) wanted.set(s.sha256, s.bytes);
    const bodies = new Map<string, Buffer>();
    await Promise.all([...wanted].map(async ([sha, bytes]) => bodies.set(sha, await this.bodies.get(sha, bytes))));
    return { data, lines, spans, bodies };
  }

  /** The parts of a frame with rewritten lines (pointer text replaced by `"key":` + escaped body). */
  private spliceFrame(k: number, p: PreparedFrame): Buffer[] {
    const f = this.manifest.frames![k];
    const parts: Buffer[] = [];
    let runStart = 0;
    for (let r = 0; r < f.rewritten.length / 2; r++) {
      const l = p.lines![r];
      const spans = p.spans[r];
      if (spans.length === 0) throw mismatch("a rewritten line holds no contentRef", ">= 1", 0);
      const lineStart = l.pointer.byteOffset - p.data.byteOffset;
      parts.push(p.data.subarray(runStart, lineStart));
      let at = 0;
      let length = 0;
      for (const s of spans) {
        const body = p.bodies.get(s.sha256)!;
        const head = l.pointer.subarray(at, s.start);
        const key = KEY_PREFIX[s.key] ?? Buffer.from(`"${s.key}":`, "latin1");
        parts.push(head, key, body);
        length += head.length + key.length + body.length;
        at = s.end;
      }
      const rest = l.pointer.subarray(at);
      parts.push(rest);
      length += rest.length;
      if (length !== l.originalLength) {
        throw mismatch("a rehydrated line has another length than the manifest says", l.originalLength, length);
      }
      runStart = lineStart + l.pointer.length;
    }
    parts.push(p.data.subarray(runStart));
    return parts;
  }
}

/**
 * The pointer of a line of a diet made by the reference runtime: the `contentRef` at the line's
 * compatible body site when it is cas-shaped (`ref: "cas"`), as a span of the line's bytes; null
 * when the line holds none (any other `…Ref` object is data and stays as it is). CAS_BAD_REF
 * for a body-site pointer whose sha is not 64 lowercase hex.
 */
export function foreignSpans(pointer: Buffer): PointerSpan[] | null {
  if (pointer.indexOf(POINTER_MARKER) < 0) return null;
  let event: unknown;
  try {
    event = JSON.parse(pointer.toString("utf8"));
  } catch {
    return null;
  }
  const ref = compatibleSiteContainer(event)?.contentRef;
  if (!isCasShaped(ref)) return null;
  if (!isSha256Hex(ref.sha256)) {
    throw new JournalError("CAS_BAD_REF", `contentRef sha256 is not 64 lowercase hex: ${JSON.stringify(ref.sha256).slice(0, 80)}`, {
      actual: ref.sha256, expected: "64 lowercase hex characters",
    });
  }
  const text = pointer.toString("latin1");
  const candidates = findPointerCandidates(text).filter((s) => s.key === "content" && s.sha256 === ref.sha256 && s.bytes === ref.bytes);
  if (candidates.length === 1) return candidates;
  // The same pointer text elsewhere in the line too: the span whose replacement leaves the body
  // site holding `content` is the site's.
  for (const s of candidates) {
    const probe = Buffer.from(`${text.slice(0, s.start)}"content":""${text.slice(s.end)}`, "latin1").toString("utf8");
    try {
      const c = compatibleSiteContainer(JSON.parse(probe));
      if (c !== undefined && c.content === "" && !Object.prototype.hasOwnProperty.call(c, "contentRef")) return [s];
    } catch {
      // not this one
    }
  }
  throw mismatch("a body-site contentRef is not written as the diet writes pointers", "{sha256, bytes, encoding: \"utf-8\", ref: \"cas\"}", JSON.stringify(ref).slice(0, 200));
}

/** Scratch for decoding the blocks before the wanted one of a one-frame journal. */
const SKIP_SCRATCH_BYTES = 1024 * 1024;

/** Capacity of a reused one-frame block buffer (blocks are about FRAME_TARGET_BYTES of pointer text plus one line). */
const BLOCK_BUFFER_BYTES = 2 * 1024 * 1024 + 512 * 1024;
/** Released block buffers kept for reuse (one being written, one yielded, one decoded ahead). */
const BLOCK_BUFFERS_KEPT = 3;

/** Frames decompressed (and their bodies read) ahead of the one being consumed. */
export const PREFETCH_FRAMES = 2;

const KEY_PREFIX: Record<string, Buffer> = {
  content: Buffer.from('"content":', "latin1"),
  toolInput: Buffer.from('"toolInput":', "latin1"),
  result: Buffer.from('"result":', "latin1"),
};

interface PreparedFrame {
  data: Buffer;
  /** The rewritten lines, in manifest order; null for a frame without rewritten lines. */
  lines: PointerLine[] | null;
  /** Pointer spans of each rewritten line, in manifest order. */
  spans: PointerSpan[][];
  bodies: Map<string, Buffer>;
}
