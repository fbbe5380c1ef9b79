/**
 * Constants and table layouts of the extended diet's container (dietVersion 2, our own format;
 * `docs/extended-diet.md` has the tables and the reasons). Every integer is little-endian.
 *
 * Container (`events/events.jsonl.zst`): header · block records and pack frames in write order ·
 * pack frame table · block table · footer. Nothing here does I/O.
 */
import { JournalError, type ErrorCode } from "@hankweave-journal/core";

/** "HWXD": the container's first 4 bytes (not a zstd magic: `zstd -d` refuses the file). */
export const CONTAINER_MAGIC = 0x44585748;
/** "HWXB": the first 4 bytes of every block record. */
export const BLOCK_MAGIC = 0x42585748;
/** "HWXF": the last 4 bytes of the container. */
export const FOOTER_MAGIC = 0x46585748;
/**
 * Version 3: META is a list (the column names, then one shape per line: a read parses only the
 * shapes it uses) and SNAP is column-major with the ROWS and LINELEN positions and the line's
 * offset (a read scans only the lines from its snapshot). Version 2 (the SNAP stream, row-major,
 * META one JSON object) and version 1 (no SNAP, columns from stream 9) are still read.
 */
export const FORMAT_VERSION = 3;
/** Container versions a reader accepts. */
export const READ_VERSIONS: readonly number[] = [1, 2, 3];
/** Header: u32 magic, u32 version. */
export const HEADER_BYTES = 8;
/** Footer: u64 packTableOffset, u64 blockTableOffset, u32 nFrames, u32 nBlocks, u32 version, u32 magic. */
export const FOOTER_BYTES = 32;
/** Block table entry: u64 fileOffset, u32 recordBytes, u32 lines, u64 firstLine, u64 originalOffset, u64 originalBytes. */
export const BLOCK_ENTRY_BYTES = 40;
/** Pack frame table entry: u64 fileOffset, u32 compressedBytes, u32 rawBytes, u32 firstPiece, u32 pieces. */
export const FRAME_ENTRY_BYTES = 24;

/** Input bytes per block (a block ends at the first line end at or after this). */
export const BLOCK_TARGET_BYTES = 8 * 1024 * 1024;
/** Raw bytes per pack frame (a frame ends after the piece that reaches this): a one-line read decodes one frame per piece it needs. */
export const PACK_FRAME_TARGET_BYTES = 512 * 1024;
/**
 * The writer's reference window: a piece is referenced only while it lies within this many pool
 * bytes of the pool's end; a piece seen again after that is stored again (a new id). So a decoder
 * needs only the last PACK_WINDOW_BYTES of the pool (plus the block's own new pieces) in memory.
 */
export const PACK_WINDOW_BYTES = 24 * 1024 * 1024;
/** Decoded pack frames a decoder keeps (bytes): the window, one block's new pieces and slack. */
export const FRAME_CACHE_BYTES = PACK_WINDOW_BYTES + 12 * 1024 * 1024;
/** A cursor snapshot every this many lines of a block (version 2): a one-line read rebuilds at most this many lines. */
export const SNAPSHOT_LINES = 128;
/** A string literal of at least this many characters (escaped form) is text: split into pieces at its escaped newlines. */
export const TEXT_MIN_CHARS = 32;
/** A text piece of at least this many characters is stored once in the pack and referenced; shorter ones stay inline. */
export const PIECE_MIN_CHARS = 16;
/** zstd level of the block streams and of the pack frames. */
export const STREAM_LEVEL = 9;
export const PACK_LEVEL = 9;
/** Frames larger than this are refused by readers (a lying index must not make us allocate). */
export const MAX_FRAME_BYTES = 512 * 1024 * 1024;

/** The block streams, in record order; columns follow as streams FIRST_COLUMN_STREAM + k. */
export const STREAM = {
  META: 0,
  ROWS: 1,
  LINELEN: 2,
  VERBATIM: 3,
  ID_MS: 4,
  ID_RAND: 5,
  TS: 6,
  TEXT: 7,
  TEXTN: 8,
  /** Version 2: cursor snapshots. */
  SNAP: 9,
} as const;
/** Where the column streams start: 9 in version 1, 10 (after SNAP) in version 2. */
export function firstColumnStream(version: number): number {
  return version >= 2 ? 10 : 9;
}
export const FIRST_COLUMN_STREAM = firstColumnStream(FORMAT_VERSION);
/**
 * The streams a snapshot holds a position in, in snapshot order, after T and prevRef: VERBATIM,
 * ID_MS, ID_RAND, TS, TEXT, TEXTN, then every column (ROWS and LINELEN are scanned from the
 * block's start: they are short decimals).
 */
export const SNAPSHOT_STREAMS: readonly number[] = [3, 4, 5, 6, 7, 8];
/**
 * Where a snapshot's column positions start: after T, prevRef and SNAPSHOT_STREAMS (version 2);
 * version 3 adds the ROWS position, the LINELEN position and the line's block-relative offset.
 */
export function snapColumnsAt(version: number): number {
  return version >= 3 ? 11 : 8;
}

/** Hole characters in a shape template (never raw in JSON.stringify output, which escapes control characters). */
export const HOLE = {
  STRING: "\x01",
  NUMBER: "\x02",
  ID: "\x03",
  TIMESTAMP: "\x04",
  TEXT: "\x05",
} as const;

/** One entry of the block table. */
export interface BlockEntry {
  fileOffset: number;
  recordBytes: number;
  lines: number;
  firstLine: number;
  originalOffset: number;
  originalBytes: number;
}

/** One entry of the pack frame table. */
export interface FrameEntry {
  fileOffset: number;
  compressedBytes: number;
  rawBytes: number;
  firstPiece: number;
  pieces: number;
}

/** The footer. */
export interface Footer {
  packTableOffset: number;
  blockTableOffset: number;
  frames: number;
  blocks: number;
  version: number;
}

/** The manifest's `ext` key. */
export interface ExtManifestInfo {
  format: "hwx-columnar";
  version: number;
  lines: number;
  endsWithNewline: boolean;
  blocks: number;
  containerBytes: number;
  /** Text values moved to pieces, pieces referenced, unique pieces stored (and their bytes). */
  text: { values: number; refs: number; unique: number; uniqueBytes: number };
}

export function extError(code: ErrorCode, message: string, path: string | undefined, extra: Record<string, unknown> = {}): JournalError {
  return new JournalError(code, message, { path, ...extra }, {
    hint: "the extended diet is damaged; nothing was changed. Restore it from a backup of the directory",
  });
}

function u64(b: Buffer, at: number): number {
  const v = b.readBigUInt64LE(at);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.NaN : Number(v);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A table as little-endian u32 words (its length is a multiple of 4). Every open parses every
 * entry, in code that has not been compiled yet: element loads instead of a Buffer method call
 * (and a BigInt for each u64) per field.
 */
function wordsOf(b: Buffer): Uint32Array {
  const w = new Uint32Array(b.length >>> 2);
  if (LITTLE_ENDIAN) new Uint8Array(w.buffer).set(b.subarray(0, w.length * 4));
  else for (let i = 0; i < w.length; i++) w[i] = b.readUInt32LE(4 * i);
  return w;
}

/** The u64 at words i, i + 1 as a number (NaN above 2^53 − 1). */
function u64w(w: Uint32Array, i: number): number {
  const hi = w[i + 1];
  return hi > 0x1fffff ? Number.NaN : hi * 0x100000000 + w[i];
}

export function writeFooter(f: Footer): Buffer {
  const b = Buffer.alloc(FOOTER_BYTES);
  b.writeBigUInt64LE(BigInt(f.packTableOffset), 0);
  b.writeBigUInt64LE(BigInt(f.blockTableOffset), 8);
  b.writeUInt32LE(f.frames, 16);
  b.writeUInt32LE(f.blocks, 20);
  b.writeUInt32LE(f.version, 24);
  b.writeUInt32LE(FOOTER_MAGIC, 28);
  return b;
}

/** Parse and check the footer against the file size; EXT_TRUNCATED / EXT_INDEX_INVALID. */
export function readFooter(b: Buffer, fileBytes: number, path?: string): Footer {
  if (fileBytes < HEADER_BYTES + FOOTER_BYTES || b.length !== FOOTER_BYTES || b.readUInt32LE(28) !== FOOTER_MAGIC) {
    throw extError("EXT_TRUNCATED", "the extended container has no footer (truncated or not an extended diet)", path, { actual: fileBytes });
  }
  const f: Footer = { packTableOffset: u64(b, 0), blockTableOffset: u64(b, 8), frames: b.readUInt32LE(16), blocks: b.readUInt32LE(20), version: b.readUInt32LE(24) };
  if (!READ_VERSIONS.includes(f.version)) throw extError("EXT_INDEX_INVALID", `unsupported container version ${f.version}`, path);
  if (!(f.packTableOffset >= HEADER_BYTES && f.packTableOffset + f.frames * FRAME_ENTRY_BYTES === f.blockTableOffset
    && f.blockTableOffset + f.blocks * BLOCK_ENTRY_BYTES + FOOTER_BYTES === fileBytes)) {
    throw extError("EXT_INDEX_INVALID", "the container's footer does not add up to the file", path, { actual: f, expected: { fileBytes } });
  }
  return f;
}

export function writeBlockEntry(e: BlockEntry, b: Buffer, at: number): void {
  b.writeBigUInt64LE(BigInt(e.fileOffset), at);
  b.writeUInt32LE(e.recordBytes, at + 8);
  b.writeUInt32LE(e.lines, at + 12);
  b.writeBigUInt64LE(BigInt(e.firstLine), at + 16);
  b.writeBigUInt64LE(BigInt(e.originalOffset), at + 24);
  b.writeBigUInt64LE(BigInt(e.originalBytes), at + 32);
}

/** Parse the block table and check that blocks tile the lines and the original bytes; EXT_INDEX_INVALID. */
export function readBlockTable(b: Buffer, f: Footer, lines: number, originalBytes: number, path?: string): BlockEntry[] {
  const out: BlockEntry[] = new Array(f.blocks);
  const w = wordsOf(b);
  let line = 0;
  let offset = 0;
  for (let k = 0; k < f.blocks; k++) {
    const i = k * (BLOCK_ENTRY_BYTES / 4);
    const e: BlockEntry = {
      fileOffset: u64w(w, i), recordBytes: w[i + 2], lines: w[i + 3],
      firstLine: u64w(w, i + 4), originalOffset: u64w(w, i + 6), originalBytes: u64w(w, i + 8),
    };
    if (e.firstLine !== line || e.originalOffset !== offset || e.lines === 0 || !(e.fileOffset >= HEADER_BYTES)
      || e.fileOffset + e.recordBytes > f.packTableOffset) {
      throw extError("EXT_INDEX_INVALID", `block ${k} of the block table does not fit (line ${line}, offset ${offset})`, path, { actual: e });
    }
    line += e.lines;
    offset += e.originalBytes;
    out[k] = e;
  }
  if (line !== lines || offset !== originalBytes) {
    throw extError("EXT_INDEX_INVALID", "the block table does not add up to the manifest's lines and bytes", path, {
      expected: { lines, originalBytes }, actual: { lines: line, originalBytes: offset },
    });
  }
  return out;
}

export function writeFrameEntry(e: FrameEntry, b: Buffer, at: number): void {
  b.writeBigUInt64LE(BigInt(e.fileOffset), at);
  b.writeUInt32LE(e.compressedBytes, at + 8);
  b.writeUInt32LE(e.rawBytes, at + 12);
  b.writeUInt32LE(e.firstPiece, at + 16);
  b.writeUInt32LE(e.pieces, at + 20);
}

/** Parse the pack frame table: frames tile the piece ids from 0 and lie inside the container; EXT_INDEX_INVALID. */
export function readFrameTable(b: Buffer, f: Footer, path?: string): FrameEntry[] {
  const out: FrameEntry[] = new Array(f.frames);
  const w = wordsOf(b);
  let piece = 0;
  for (let k = 0; k < f.frames; k++) {
    const i = k * (FRAME_ENTRY_BYTES / 4);
    const e: FrameEntry = {
      fileOffset: u64w(w, i), compressedBytes: w[i + 2], rawBytes: w[i + 3],
      firstPiece: w[i + 4], pieces: w[i + 5],
    };
    if (e.firstPiece !== piece || e.pieces === 0 || !(e.fileOffset >= HEADER_BYTES) || e.compressedBytes === 0
      || e.fileOffset + e.compressedBytes > f.packTableOffset || e.rawBytes > MAX_FRAME_BYTES || e.rawBytes < e.pieces) {
      throw extError("EXT_INDEX_INVALID", `pack frame ${k} of the frame table does not fit (piece ${piece})`, path, { actual: e });
    }
    piece += e.pieces;
    out[k] = e;
  }
  return out;
}
