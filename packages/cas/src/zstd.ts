/**
 * zstd with a size guard before every decompression. Both bindings are used through their public
 * entry points only. Frames at level 3 (the pointer journal's) are compressed by `@mongodb-js/zstd`'s
 * `compress`, whose level is 3 (byte-identical to its binding at level 3, checked), on the libuv
 * threadpool, so several frames in flight use several cores; other levels go through `zstd-napi`
 * (`compressOneShot`, synchronous). Decompression of an output of known size goes through
 * libzstd's `ZSTD_decompressDCtx` (`zstd-native.ts`) into a buffer of exactly that size; only
 * streams of unknown size use `@mongodb-js/zstd`'s `decompress`.
 */
import { createRequire } from "node:module";
import { JournalError, isJournalError, nativeModule } from "@hankweave-journal/core";
import { inspectZstd } from "./zstd-frames.js";
import { compressOneShot, decodeInto } from "./zstd-native.js";

interface NativeZstd {
  compress(data: Buffer): Promise<Buffer>;
  decompress(data: Buffer): Promise<Buffer>;
}

/**
 * Loaded on first use, not at import (as the DuckDB binding): only compressing a level-3 frame
 * and decoding a stream of unknown size need it, and its load cost ~14 ms in every process and
 * worker that imports this module (a restore's decode workers never use it).
 */
let nativeGetter: (() => NativeZstd) | undefined;
const native = (): NativeZstd => (nativeGetter ??= nativeModule<NativeZstd>(createRequire(import.meta.url), "@mongodb-js/zstd", "@mongodb-js/zstd"))();
/** The level of `@mongodb-js/zstd`'s public `compress` (it takes none). */
const THREADPOOL_LEVEL = 3;

/**
 * Default level of CAS bodies (format §5.1: ours to choose by measurement; the reference runtime
 * writes 19 and reads any level). Measured on the 847 unique bodies (16.0 MB) of the 100 MB
 * body-heavy v1 bench journal, one frame each (docs/diet.md, "CAS level"): level 9 stores them in
 * 3,758,616 bytes for 0.59 CPU-s, level 19 in 3,516,975 bytes (−6.4 %) for 9.55 CPU-s (16×).
 */
export const CAS_ZSTD_LEVEL = 9;
/** Level of the pointer journal (format §5.1). */
export const JOURNAL_ZSTD_LEVEL = 3;

/**
 * Decompression limit for an output expected to be `expectedBytes` long. The structural bound of
 * a frame without content size counts every compressed block at 128 KiB, and zstd's block
 * splitter (levels ≥ 16) writes several smaller blocks per 128 KiB, so a legitimate frame's
 * bound can exceed its real size a few times over (measured: 3.6× on a 108 KB body at level 19).
 * Anything beyond 16× + 1 MiB is refused before decoding; the exact length is checked after.
 */
export function decompressLimitFor(expectedBytes: number): number {
  return expectedBytes * ZSTD_BOUND_FACTOR + ZSTD_BOUND_SLACK_BYTES;
}
const ZSTD_BOUND_FACTOR = 16;
/**
 * Outputs of known size up to this are decoded synchronously in the calling thread (~8 ms at
 * most); larger ones (a frame holding one huge line, a huge body) go to the threadpool, so a
 * reader embedded in a server never holds its event loop longer than that.
 */
const SYNC_DECODE_MAX_BYTES = 8 * 1024 * 1024;
const ZSTD_BOUND_SLACK_BYTES = 1024 * 1024;

/** Compress `data` into one zstd frame at `level` (no checksum, no content size: verify by SHA-256). */
export async function compressZstd(data: Uint8Array, level: number): Promise<Buffer> {
  const input = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (level === THREADPOOL_LEVEL) return native().compress(input);
  return compressOneShot(input, level);
}

/**
 * Decompress `data` (one or more frames, skippable frames ignored) after checking its structure.
 *
 * Guarantees: throws ZSTD_CORRUPT for 0 bytes, truncation or garbage, ZSTD_TOO_LARGE when the
 * frames' declared or maximal output exceeds `maxBytes` (checked before the decoder allocates),
 * and ZSTD_CORRUPT when the output length differs from `expectedBytes` (when given).
 *
 * @example await decompressZstd(frame, { maxBytes: 1 << 20, expectedBytes: 5 })
 */
export async function decompressZstd(
  data: Uint8Array,
  opts: { maxBytes: number; expectedBytes?: number },
): Promise<Buffer> {
  const input = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const frames = inspectZstd(input);
  let bound = 0;
  let declared: number | null = 0;
  for (const f of frames) {
    if (f.contentSize !== null && f.contentSize > opts.maxBytes) {
      throw new JournalError("ZSTD_TOO_LARGE", `a zstd frame header claims ${f.contentSize} bytes (limit ${opts.maxBytes})`, {
        byteOffset: f.offset,
        expected: opts.maxBytes,
        actual: f.contentSize,
      });
    }
    if (f.contentSize !== null && f.contentSize > f.decompressedBound) {
      throw new JournalError("ZSTD_CORRUPT", "a zstd frame claims more content than its blocks can hold", { byteOffset: f.offset });
    }
    bound += f.decompressedBound;
    if (!f.skippable) declared = f.contentSize === null || declared === null ? null : declared + f.contentSize;
  }
  if (bound > opts.maxBytes) {
    throw new JournalError("ZSTD_TOO_LARGE", `zstd input may decompress to ${bound} bytes (limit ${opts.maxBytes})`, {
      expected: opts.maxBytes,
      actual: bound,
    });
  }
  if (declared !== null && opts.expectedBytes !== undefined && declared !== opts.expectedBytes) {
    throw new JournalError("ZSTD_CORRUPT", `zstd frames declare ${declared} bytes, expected ${opts.expectedBytes}`, {
      expected: opts.expectedBytes,
      actual: declared,
    });
  }
  let out: Buffer;
  try {
    // When the output size is known (every frame declares it, or the caller expects it; either way
    // within maxBytes, checked above) libzstd decodes synchronously into a buffer of exactly that
    // size: one allocation, no threadpool round trip, and output that would overflow it is an
    // error, not a bigger buffer. Only streams of unknown size go to the streaming decoder.
    const size = opts.expectedBytes ?? declared;
    if (size !== null && size <= SYNC_DECODE_MAX_BYTES) {
      const dst = Buffer.allocUnsafe(size);
      out = dst.subarray(0, decodeInto(dst, input));
    } else {
      out = await native().decompress(input);
    }
  } catch (e) {
    if (isJournalError(e)) throw e; // NATIVE_MODULE_UNAVAILABLE: not a corrupt frame
    throw new JournalError("ZSTD_CORRUPT", `zstd decompression failed: ${(e as Error).message}`, {}, { cause: e });
  }
  if (opts.expectedBytes !== undefined && out.length !== opts.expectedBytes) {
    throw new JournalError("ZSTD_CORRUPT", `zstd output is ${out.length} bytes, expected ${opts.expectedBytes}`, {
      expected: opts.expectedBytes,
      actual: out.length,
    });
  }
  return out;
}
