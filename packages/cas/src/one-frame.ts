/**
 * The compatible diet's pointer journal as ONE zstd frame (format §5.1): the reference runtime on
 * Node 22 decodes only the first frame of a multi-frame file (nodejs/node #64741), so
 * `events.jsonl.zst` is a single frame with its content size in the header.
 *
 * Writing: libzstd's streaming compressor (`ZSTD_compressStream2`, through `zstd-napi`) with
 * `nbWorkers` compression threads of libzstd's own (ZSTD_MULTITHREAD), fed while the journal is
 * scanned, so the caller's thread keeps scanning while the cores compress. The size is not known
 * when the frame starts (it is what the scan produces), so the compressor writes a header without
 * Frame_Content_Size, and `finish` rewrites that header with an 8-byte Frame_Content_Size field
 * (RFC 8878 §3.1.1.1.1, FCS_Field_Size 3): the blocks that follow do not depend on the header, so
 * the rest of the frame is written once, 8 bytes further into the file, and never moved.
 *
 * Reading: `OneFrameReader` decodes the frame as a stream (`ZSTD_decompressStream`) into buffers
 * of sizes the caller knows (the manifest's block sizes), so memory is one input chunk plus the
 * caller's buffer, whatever the journal's size.
 */
import { readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { JournalError } from "@hankweave-journal/core";
import { writeAll } from "./seekable.js";
import { ZSTD_FRAME_MAGIC } from "./zstd-frames.js";
import { zstdNapi } from "./zstd-native.js";

/** Compressed bytes collected before one write. */
const WRITE_BYTES = 1024 * 1024;
/** Compressed bytes read per refill when decoding. */
const READ_BYTES = 256 * 1024;
const FCS_BYTES = 8;

/**
 * Where the blocks of a frame start and whether its header lacks a content size. `head` holds at
 * least the frame's first 18 bytes (or all of it when shorter).
 */
export function frameHeaderOf(head: Uint8Array): { headerBytes: number; hasContentSize: boolean } {
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  if (head.length < 6 || view.getUint32(0, true) !== ZSTD_FRAME_MAGIC) {
    throw new JournalError("ZSTD_CORRUPT", "the compressor's output does not start with a zstd frame header");
  }
  const fhd = head[4];
  const fcsFlag = fhd >> 6;
  const single = (fhd >> 5) & 1;
  const dictBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? single : [0, 2, 4, 8][fcsFlag];
  return { headerBytes: 4 + 1 + (single ? 0 : 1) + dictBytes + fcsBytes, hasContentSize: fcsFlag !== 0 || single === 1 };
}

/**
 * `header` (a frame header without Frame_Content_Size: magic, descriptor, window descriptor,
 * optional dictionary id) with an 8-byte Frame_Content_Size of `contentBytes` appended and the
 * descriptor's FCS_Field_Size set to 3.
 *
 * @example withContentSize(header, 1234).length === header.length + 8
 */
export function withContentSize(header: Uint8Array, contentBytes: number): Buffer {
  const out = Buffer.alloc(header.length + FCS_BYTES);
  out.set(header);
  out[4] = (header[4] & 0x3f) | 0xc0;
  out.writeBigUInt64LE(BigInt(contentBytes), header.length);
  return out;
}

/**
 * Writes one zstd frame to `fh` from offset 0, fed piece by piece. One write in flight at a time;
 * memory is libzstd's job buffers (a few MiB per worker at level 3) plus WRITE_BYTES.
 */
export class OneFrameWriter {
  private readonly lib = zstdNapi();
  private readonly cctx = new this.lib.CCtx();
  private out = Buffer.allocUnsafe(WRITE_BYTES + 128 * 1024);
  private fill = 0;
  /** Output before the header was seen. */
  private head: Buffer[] = [];
  private headBytes = 0;
  /** The header to rewrite at the end (null: written as is, or not seen yet). */
  private header: Buffer | null = null;
  private decided = false;
  private position = 0;
  private writing: Promise<void> = Promise.resolve();
  private contentBytes = 0;
  private finished = false;
  /** Called with (position, length) after each write of the frame's bytes completed, in file order. */
  onWritten: ((position: number, length: number) => void) | null = null;

  /** `workers` libzstd threads (0: compress in the calling thread). */
  constructor(private readonly fh: FileHandle, level: number, workers: number) {
    const P = this.lib.CParameter;
    this.cctx.setParameter(P.compressionLevel, level);
    this.cctx.setParameter(P.checksumFlag, 0);
    if (workers > 0) this.cctx.setParameter(P.nbWorkers, workers);
  }

  /**
   * The header written at the end (null: none pending, the header went out as is with the first
   * write); the frame's other bytes start at `headerBytes + 8` until then.
   */
  get pendingHeader(): Buffer | null {
    return this.header;
  }

  /** Uncompressed bytes fed so far. */
  get bytesIn(): number {
    return this.contentBytes;
  }

  /** Feed `data` (may be reused by the caller once this resolves). */
  async write(data: Uint8Array): Promise<void> {
    if (this.finished) throw new RangeError("write after finish");
    this.contentBytes += data.length;
    await this.feed(data, this.lib.EndDirective.continue);
  }

  /** End the frame, write the rest and the final header; returns the file's size. */
  async finish(): Promise<{ bytes: number; contentBytes: number }> {
    this.finished = true;
    await this.feed(new Uint8Array(0), this.lib.EndDirective.end);
    await this.flush(true);
    await this.writing;
    if (this.header !== null) await writeAll(this.fh, withContentSize(this.header, this.contentBytes), 0);
    return { bytes: this.position, contentBytes: this.contentBytes };
  }

  private async feed(data: Uint8Array, op: number): Promise<void> {
    let at = 0;
    for (;;) {
      const [left, produced, consumed] = this.cctx.compressStream2(this.out.subarray(this.fill), data.subarray(at), op);
      this.fill += produced;
      at += consumed;
      if (this.fill >= WRITE_BYTES || this.out.length - this.fill < 1024) await this.flush(false);
      if (op === this.lib.EndDirective.end ? left === 0 : at === data.length) return;
    }
  }

  /** Queue what was produced (after the previous write finished: one in flight). */
  private async flush(last: boolean): Promise<void> {
    if (this.fill === 0 && !last) return;
    const chunk = Buffer.from(this.out.subarray(0, this.fill));
    this.fill = 0;
    if (!this.decided) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes < 18 && !last) return;
      const all = Buffer.concat(this.head, this.headBytes);
      this.head = [];
      const h = frameHeaderOf(all);
      this.decided = true;
      if (h.hasContentSize) {
        await this.queue(all);
      } else {
        // Leave room for the 8-byte content size; the header is rewritten by finish().
        this.header = Buffer.from(all.subarray(0, h.headerBytes));
        this.position = h.headerBytes + FCS_BYTES;
        await this.queue(all.subarray(h.headerBytes));
      }
      return;
    }
    if (chunk.length > 0) await this.queue(chunk);
  }

  private async queue(chunk: Buffer): Promise<void> {
    await this.writing;
    const at = this.position;
    this.position += chunk.length;
    this.writing = writeAll(this.fh, chunk, at).then(() => this.onWritten?.(at, chunk.length));
    this.writing.catch(() => undefined);
  }
}

function corrupt(path: string | undefined, message: string, byteOffset?: number): JournalError {
  return new JournalError("ZSTD_CORRUPT", `${path ?? "the zstd file"}: ${message}`, { path, byteOffset });
}

/** The zstd stream decoder both one-frame readers share: its input is the file up to `limit`. */
abstract class FrameDecoder {
  private readonly dctx = new (zstdNapi().DCtx)();
  protected readonly input = Buffer.allocUnsafe(READ_BYTES);
  protected inAt = 0;
  protected inEnd = 0;
  /** Next file position to read. */
  protected filePos = 0;
  /** The file holds the frame's bytes up to here (from `filePos` on). */
  protected limit = 0;
  /** The decoder reported the end of a frame and had nothing buffered since. */
  protected atFrameEnd = false;
  /** Decompressed bytes produced so far. */
  produced = 0;

  constructor(protected readonly fd: number, protected readonly path?: string) {}

  protected refill(): boolean {
    if (this.filePos >= this.limit) return false;
    const n = readSync(this.fd, this.input, 0, Math.min(READ_BYTES, this.limit - this.filePos), this.filePos);
    if (n === 0) throw corrupt(this.path, `file ends at ${this.filePos}, expected ${this.limit} bytes`, this.filePos);
    this.filePos += n;
    this.inAt = 0;
    this.inEnd = n;
    return true;
  }

  /** One decoder call; returns [bytes produced, bytes consumed]. */
  protected step(dst: Uint8Array): [number, number] {
    let r: [number, number, number];
    try {
      r = this.dctx.decompressStream(dst, this.input.subarray(this.inAt, this.inEnd));
    } catch (e) {
      throw corrupt(this.path, `zstd decoding failed: ${(e as Error).message}`, this.filePos);
    }
    this.inAt += r[2];
    if (r[1] > 0 || r[2] > 0) this.atFrameEnd = r[0] === 0;
    this.produced += r[1];
    return [r[1], r[2]];
  }
}

/**
 * Decodes the zstd stream of a file descriptor (`fd`, `fileSize` bytes from offset 0) into
 * buffers the caller sizes, synchronously (libzstd's streaming decoder; one READ_BYTES input
 * chunk held). Throws ZSTD_CORRUPT when the stream is corrupt, ends early, or (`end`) holds more
 * than was read.
 */
export class OneFrameReader extends FrameDecoder {
  constructor(fd: number, fileSize: number, path?: string) {
    super(fd, path);
    this.limit = fileSize;
  }

  /** Fill all of `dst` with the next decompressed bytes (ZSTD_CORRUPT when the stream ends first). */
  readInto(dst: Uint8Array): void {
    let got = 0;
    while (got < dst.length) {
      const [n, used] = this.step(dst.subarray(got));
      got += n;
      if (n === 0 && used === 0 && got < dst.length) {
        // No progress: the decoder needs more input (or the stream is over).
        if (this.inAt < this.inEnd || !this.refill()) {
          throw corrupt(this.path, `the zstd stream ends after ${this.produced} decompressed bytes (truncated?)`, this.filePos);
        }
      }
    }
  }

  /** Skip `n` decompressed bytes through `scratch` (reused). */
  skip(n: number, scratch: Buffer): void {
    while (n > 0) {
      const view = scratch.subarray(0, Math.min(n, scratch.length));
      this.readInto(view);
      n -= view.length;
    }
  }

  /** Check that the stream ends here: a complete frame, no more output, nothing after it. */
  end(): void {
    const probe = Buffer.allocUnsafe(1);
    for (;;) {
      const [n, used] = this.step(probe);
      if (n > 0) throw corrupt(this.path, `the zstd stream holds more than the ${this.produced - 1} bytes indexed`);
      if (this.inAt === this.inEnd) {
        if (!this.refill()) break;
      } else if (used === 0) {
        throw corrupt(this.path, "the zstd decoder stopped before the end of the file", this.filePos);
      }
    }
    if (!this.atFrameEnd) throw corrupt(this.path, `the zstd frame is not complete after ${this.produced} bytes (truncated?)`, this.filePos);
  }
}

/**
 * Decodes a one-frame file WHILE `OneFrameWriter` writes it, from what is already on disk: the
 * compatible diet's verification in step with the compression instead of a second pass (format
 * §5.1: the diet is verified from disk before it is published). The writer's provisional header
 * (without Frame_Content_Size, rewritten at the end) is fed from memory first; every other byte
 * of the frame is read back from the file (`pread`) once its write completed (`written`). At the
 * end, `checkEnd` reads the final header back and checks it is that header with the content size
 * that was decoded, and that the frame ended exactly at the end of the file.
 */
export class OneFrameFollower extends FrameDecoder {
  private header: Buffer | null = null;

  /** The frame's bytes [position, position + length) are on disk (called in file order). */
  written(position: number, length: number, pendingHeader: Buffer | null): void {
    if (this.limit === 0 && this.filePos === 0) {
      // The first write: the frame starts at 0, or after the header that is rewritten at the end.
      if (pendingHeader !== null) {
        this.header = Buffer.from(pendingHeader);
        this.input.set(this.header, 0);
        this.inEnd = this.header.length;
      }
      this.filePos = position;
    } else if (position !== this.limit) {
      throw corrupt(this.path, `a write at ${position} does not follow the one that ended at ${this.limit}`, position);
    }
    this.limit = position + length;
  }

  /**
   * Decode what is on disk into `dst` from `fill`; returns the new fill (less than `dst.length`
   * when the written bytes ran out first: call again after the next `written`).
   */
  decodeInto(dst: Uint8Array, fill: number): number {
    while (fill < dst.length) {
      if (this.inAt === this.inEnd && !this.refill()) return fill;
      const [n, used] = this.step(dst.subarray(fill));
      fill += n;
      if (n === 0 && used === 0 && this.inAt < this.inEnd) throw corrupt(this.path, "the zstd decoder stopped making progress", this.filePos);
    }
    return fill;
  }

  /**
   * After the writer finished (`fileBytes` on disk): nothing more decodes, the frame is complete
   * and ends the file, and the header on disk is the provisional one with a Frame_Content_Size of
   * the bytes decoded (or, when the header went out with the first write, it was decoded as is).
   */
  checkEnd(fileBytes: number): void {
    if (this.limit !== fileBytes) throw corrupt(this.path, `the file holds ${fileBytes} bytes, ${this.limit} were written`, fileBytes);
    const probe = Buffer.allocUnsafe(1);
    if (this.decodeInto(probe, 0) > 0) throw corrupt(this.path, `the zstd stream holds more than the ${this.produced - 1} bytes indexed`);
    if (this.inAt < this.inEnd || this.filePos !== fileBytes) throw corrupt(this.path, "the zstd frame ends before the file", this.filePos);
    if (!this.atFrameEnd) throw corrupt(this.path, `the zstd frame is not complete after ${this.produced} bytes (truncated?)`, this.filePos);
    if (this.header === null) return;
    const expected = withContentSize(this.header, this.produced);
    const onDisk = Buffer.allocUnsafe(expected.length);
    const n = readSync(this.fd, onDisk, 0, onDisk.length, 0);
    if (n !== expected.length || !onDisk.equals(expected) || !frameHeaderOf(onDisk).hasContentSize) {
      throw corrupt(this.path, "the frame header on disk is not the one decoded with its content size", 0);
    }
  }
}
