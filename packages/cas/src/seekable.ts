/**
 * The zstd seekable format (format §5.1): independent frames followed by a skippable seek-table
 * frame. `zstd -d` reads the file as one ordinary stream; we read the table to jump to frame K.
 *
 * Table layout, little-endian: u32 0x184D2A5E, u32 frame size, per frame {u32 compressed, u32
 * decompressed}, then the 9-byte footer {u32 frames, u8 descriptor (0: no checksums), u32
 * 0x8F92EAB1}. A table is recognised only by the footer magic AND sizes adding up to the file.
 */
import { readSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { JournalError } from "@hankweave-journal/core";
import { compressZstd } from "./zstd.js";

export const SEEKABLE_SKIPPABLE_MAGIC = 0x184d2a5e;
export const SEEKABLE_FOOTER_MAGIC = 0x8f92eab1;
const FOOTER_BYTES = 9;
const CHECKSUM_FLAG = 0x80;

/** One frame of a seekable file. */
export interface SeekEntry {
  compressedSize: number;
  decompressedSize: number;
}

/** A parsed seek table with frame offsets (prefix sums). */
export interface SeekTable {
  entries: SeekEntry[];
  /** Byte offset of each frame in the file. */
  offsets: number[];
  /** Bytes of the table frame itself (at the end of the file). */
  tableBytes: number;
}

/** Encode the seek-table frame for `entries` (descriptor 0: no checksums). */
export function encodeSeekTable(entries: readonly SeekEntry[]): Buffer {
  const body = entries.length * 8 + FOOTER_BYTES;
  const out = Buffer.alloc(8 + body);
  out.writeUInt32LE(SEEKABLE_SKIPPABLE_MAGIC, 0);
  out.writeUInt32LE(body, 4);
  let p = 8;
  for (const e of entries) {
    out.writeUInt32LE(e.compressedSize, p);
    out.writeUInt32LE(e.decompressedSize, p + 4);
    p += 8;
  }
  out.writeUInt32LE(entries.length, p);
  out.writeUInt8(0, p + 4);
  out.writeUInt32LE(SEEKABLE_FOOTER_MAGIC, p + 5);
  return out;
}

/**
 * Parse the seek table at the end of a file of `fileSize` bytes, given its last bytes `tail`
 * (at least the whole table). Returns null when there is no valid table (a foreign .zst).
 */
export function parseSeekTable(tail: Buffer, fileSize: number): SeekTable | null {
  if (tail.length < FOOTER_BYTES || fileSize < FOOTER_BYTES + 8) return null;
  const f = tail.length - FOOTER_BYTES;
  if (tail.readUInt32LE(f + 5) !== SEEKABLE_FOOTER_MAGIC) return null;
  const n = tail.readUInt32LE(f);
  const descriptor = tail.readUInt8(f + 4);
  if ((descriptor & ~CHECKSUM_FLAG) !== 0) return null;
  const entryBytes = descriptor & CHECKSUM_FLAG ? 12 : 8;
  const body = n * entryBytes + FOOTER_BYTES;
  const tableBytes = 8 + body;
  if (tableBytes > tail.length || tableBytes > fileSize) return null;
  const t = tail.length - tableBytes;
  if (tail.readUInt32LE(t) !== SEEKABLE_SKIPPABLE_MAGIC || tail.readUInt32LE(t + 4) !== body) return null;
  const entries: SeekEntry[] = [];
  const offsets: number[] = [];
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const p = t + 8 + i * entryBytes;
    offsets.push(sum);
    const e = { compressedSize: tail.readUInt32LE(p), decompressedSize: tail.readUInt32LE(p + 4) };
    sum += e.compressedSize;
    entries.push(e);
  }
  if (sum + tableBytes !== fileSize) return null;
  return { entries, offsets, tableBytes };
}

/** Read the seek table of an open file, or null when it has none. Reads only the table bytes. */
export async function readSeekTable(fh: FileHandle, fileSize: number): Promise<SeekTable | null> {
  if (fileSize < FOOTER_BYTES + 8) return null;
  const footer = Buffer.alloc(FOOTER_BYTES);
  await fh.read(footer, 0, FOOTER_BYTES, fileSize - FOOTER_BYTES);
  if (footer.readUInt32LE(5) !== SEEKABLE_FOOTER_MAGIC) return null;
  const n = footer.readUInt32LE(0);
  const entryBytes = footer.readUInt8(4) & CHECKSUM_FLAG ? 12 : 8;
  const tableBytes = 8 + n * entryBytes + FOOTER_BYTES;
  if (tableBytes > fileSize) return null;
  const tail = Buffer.alloc(tableBytes);
  await fh.read(tail, 0, tableBytes, fileSize - tableBytes);
  return parseSeekTable(tail, fileSize);
}

/**
 * `readSeekTable` for a raw descriptor, with synchronous reads (two small reads of a cached file:
 * cheaper than two threadpool round trips on the open path of a one-line read).
 */
export function readSeekTableSync(fd: number, fileSize: number): SeekTable | null {
  if (fileSize < FOOTER_BYTES + 8) return null;
  const footer = readExactlySync(fd, FOOTER_BYTES, fileSize - FOOTER_BYTES);
  if (footer.readUInt32LE(5) !== SEEKABLE_FOOTER_MAGIC) return null;
  const n = footer.readUInt32LE(0);
  const entryBytes = footer.readUInt8(4) & CHECKSUM_FLAG ? 12 : 8;
  const tableBytes = 8 + n * entryBytes + FOOTER_BYTES;
  if (tableBytes > fileSize) return null;
  return parseSeekTable(readExactlySync(fd, tableBytes, fileSize - tableBytes), fileSize);
}

/**
 * Writes a seekable file frame by frame: `addFrame` compresses (up to `inFlight` at once, on the
 * libuv threadpool) and appends frames in submission order; `finish` appends the seek table.
 * Never holds more than `inFlight` uncompressed frames.
 */
export class SeekableWriter {
  private readonly pending: Promise<Buffer>[] = [];
  private readonly sizes: number[] = [];
  private readonly entries: SeekEntry[] = [];
  private position = 0;

  constructor(
    private readonly fh: FileHandle,
    private readonly level: number,
    private readonly inFlight = 2,
  ) {
    if (inFlight < 1) throw new RangeError("inFlight must be ≥ 1");
  }

  /** Queue one frame (its bytes must not change until it was written). */
  async addFrame(data: Buffer): Promise<void> {
    if (data.length === 0) throw new RangeError("empty frame");
    if (data.length > 0xffffffff) throw new RangeError("frame larger than 4 GiB");
    this.pending.push(compressZstd(data, this.level));
    this.sizes.push(data.length);
    while (this.pending.length >= this.inFlight) await this.flushOne();
  }

  private async flushOne(): Promise<void> {
    const frame = await this.pending.shift()!;
    const decompressedSize = this.sizes.shift()!;
    await writeAll(this.fh, frame, this.position);
    this.position += frame.length;
    this.entries.push({ compressedSize: frame.length, decompressedSize });
  }

  /** Write the remaining frames and the seek table; returns the entries and the file size. */
  async finish(): Promise<{ entries: SeekEntry[]; bytes: number }> {
    while (this.pending.length > 0) await this.flushOne();
    const table = encodeSeekTable(this.entries);
    await writeAll(this.fh, table, this.position);
    this.position += table.length;
    return { entries: this.entries, bytes: this.position };
  }
}

/** Write all of `buf` at `position` (continuing short writes). */
export async function writeAll(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await fh.write(buf, done, buf.length - done, position + done);
    if (bytesWritten <= 0) throw new JournalError("IO_ERROR", "write returned 0 bytes");
    done += bytesWritten;
  }
}

/** Read exactly `length` bytes at `position`; ZSTD_CORRUPT when the file is shorter. */
export async function readExactly(fh: FileHandle, length: number, position: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) {
      throw new JournalError("ZSTD_CORRUPT", `file ends at ${position + done}, expected ${length} bytes at ${position}`, {
        byteOffset: position + done,
      });
    }
    done += bytesRead;
  }
  return buf;
}

/** `readExactly` with synchronous reads on a raw descriptor; ZSTD_CORRUPT when the file is shorter. */
export function readExactlySync(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const bytesRead = readSync(fd, buf, done, length - done, position + done);
    if (bytesRead === 0) {
      throw new JournalError("ZSTD_CORRUPT", `file ends at ${position + done}, expected ${length} bytes at ${position}`, {
        byteOffset: position + done,
      });
    }
    done += bytesRead;
  }
  return buf;
}
