/**
 * A structural walker over zstd frames (RFC 8878 §3.1): headers and block headers only, no
 * decompression. It finds truncation before the decoder runs and computes, per frame, the
 * declared content size and an upper bound of the decompressed size (the sum of block outputs:
 * raw and RLE blocks exactly, compressed blocks at most Block_Maximum_Size). That bound lets us
 * refuse a frame that would decompress to a huge buffer BEFORE calling the native decoder,
 * which allocates whatever the frame claims.
 */
import { JournalError } from "@hankweave-journal/core";

export const ZSTD_FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_BASE = 0x184d2a50;
const BLOCK_MAX_BYTES = 128 * 1024;

/** One frame found in a buffer. */
export interface ZstdFrameInfo {
  offset: number;
  /** Total bytes of the frame (header, blocks, checksum). */
  size: number;
  skippable: boolean;
  /** Frame_Content_Size when the header declares it, else null. */
  contentSize: number | null;
  /** Upper bound of the decompressed bytes from the block headers (exact for raw/RLE blocks); a declared contentSize above it is corrupt. */
  decompressedBound: number;
}

function corrupt(message: string, offset: number): JournalError {
  return new JournalError("ZSTD_CORRUPT", message, { byteOffset: offset });
}

/** True when `magic` is a skippable-frame magic (0x184D2A50..5F). */
export function isSkippableMagic(magic: number): boolean {
  return ((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_BASE;
}

function readFrame(buf: Uint8Array, at: number): ZstdFrameInfo {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (at + 4 > buf.length) throw corrupt("truncated zstd frame magic", at);
  const magic = view.getUint32(at, true);
  if (isSkippableMagic(magic)) {
    if (at + 8 > buf.length) throw corrupt("truncated skippable frame header", at);
    const size = 8 + view.getUint32(at + 4, true);
    if (at + size > buf.length) throw corrupt("truncated skippable frame", at);
    return { offset: at, size, skippable: true, contentSize: 0, decompressedBound: 0 };
  }
  if (magic !== ZSTD_FRAME_MAGIC) throw corrupt(`not a zstd frame (magic 0x${magic.toString(16)})`, at);
  let p = at + 4;
  if (p >= buf.length) throw corrupt("truncated zstd frame header", at);
  const fhd = buf[p++];
  const fcsFlag = fhd >> 6;
  const singleSegment = (fhd >> 5) & 1;
  if ((fhd >> 3) & 1) throw corrupt("reserved bit set in zstd frame header", at);
  const checksum = (fhd >> 2) & 1;
  const dictIdBytes = [0, 1, 2, 4][fhd & 3];
  const fcsBytes = fcsFlag === 0 ? singleSegment : [0, 2, 4, 8][fcsFlag];
  let windowSize = 0;
  if (!singleSegment) {
    if (p >= buf.length) throw corrupt("truncated zstd window descriptor", at);
    const wd = buf[p++];
    const exponent = wd >> 3;
    const base = 2 ** (10 + exponent);
    windowSize = base + (base / 8) * (wd & 7);
  }
  p += dictIdBytes;
  if (p + fcsBytes > buf.length) throw corrupt("truncated zstd frame header", at);
  let contentSize: number | null = null;
  if (fcsBytes === 1) contentSize = buf[p];
  else if (fcsBytes === 2) contentSize = view.getUint16(p, true) + 256;
  else if (fcsBytes === 4) contentSize = view.getUint32(p, true);
  else if (fcsBytes === 8) contentSize = Number(view.getBigUint64(p, true));
  p += fcsBytes;
  if (singleSegment) windowSize = contentSize ?? 0;
  const blockMax = Math.min(windowSize, BLOCK_MAX_BYTES);
  let bound = 0;
  for (;;) {
    if (p + 3 > buf.length) throw corrupt("truncated zstd block header", p);
    const bh = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16);
    p += 3;
    const last = bh & 1;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    if (type === 0) {
      p += size;
      bound += size;
    } else if (type === 1) {
      p += 1;
      bound += size;
    } else if (type === 2) {
      p += size;
      bound += blockMax;
    } else {
      throw corrupt("reserved zstd block type", p - 3);
    }
    if (p > buf.length) throw corrupt("truncated zstd block", p);
    if (last) break;
  }
  if (checksum) p += 4;
  if (p > buf.length) throw corrupt("truncated zstd checksum", p);
  return { offset: at, size: p - at, skippable: false, contentSize, decompressedBound: bound };
}

/**
 * Every frame of `buf`, in order. Throws ZSTD_CORRUPT for 0 bytes, truncation, a bad magic or a
 * reserved field. Does not decompress (a corrupt block payload is found by the decoder later).
 *
 * @example inspectZstd(await compressZstd(Buffer.from("x"), 3)).length // 1
 */
export function inspectZstd(buf: Uint8Array): ZstdFrameInfo[] {
  if (buf.length === 0) throw corrupt("empty zstd input (0 bytes)", 0);
  const frames: ZstdFrameInfo[] = [];
  let at = 0;
  while (at < buf.length) {
    const f = readFrame(buf, at);
    frames.push(f);
    at += f.size;
  }
  return frames;
}

/** Upper bound of the decompressed size of all frames in `buf` (see inspectZstd). */
export function decompressedBoundOf(buf: Uint8Array): number {
  let total = 0;
  for (const f of inspectZstd(buf)) total += f.contentSize !== null ? Math.min(f.contentSize, f.decompressedBound) : f.decompressedBound;
  return total;
}
