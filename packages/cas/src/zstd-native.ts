/**
 * zstd through `zstd-napi`: libzstd (1.5.7, built from the package's bundled sources by node-gyp at
 * install) with its context API. Unlike `@mongodb-js/zstd`'s binding it decodes synchronously into
 * a buffer the caller sized (no growing output, no threadpool round trip) and compresses one-shot
 * with the input size known (tables sized to the body, content size written in the header).
 * Measured on the 1 GB bench journal's 327 pointer frames: 0.64 s to decode all of them, against
 * 1.84 s for the WebAssembly build of the same `ZSTD_decompress`.
 *
 * Synchronous by design: the callers are worker threads (restore, CAS compression) or small
 * one-shot decodes (one pointer frame, one body) where a threadpool hop costs more than it saves.
 * One context of each kind per thread, created on first use and kept.
 */
import { createRequire } from "node:module";
import { nativeModule } from "@hankweave-journal/core";

/** [return value, bytes written to dst, bytes read from src] (ZSTD_compressStream2 / ZSTD_decompressStream). */
export type ZstdStreamResult = [number, number, number];

/** The part of zstd-napi's binding we use (its `binding.d.ts`). */
export interface ZstdNapiBinding {
  DCtx: new () => {
    decompress(dst: Uint8Array, src: Uint8Array): number;
    decompressStream(dst: Uint8Array, src: Uint8Array): ZstdStreamResult;
  };
  CCtx: new () => {
    compress(dst: Uint8Array, src: Uint8Array, level: number): number;
    setParameter(param: number, value: number): void;
    compressStream2(dst: Uint8Array, src: Uint8Array, endOp: number): ZstdStreamResult;
  };
  CParameter: { compressionLevel: number; nbWorkers: number; checksumFlag: number; contentSizeFlag: number };
  EndDirective: { continue: number; flush: number; end: number };
  compressBound(size: number): number;
}

const require = createRequire(import.meta.url);
/** Resolved path of the binding's loader (worker threads `require` it by this path). */
export const ZSTD_NATIVE_BINDING: string = resolveOr("zstd-napi/binding.js");
const binding = nativeModule<ZstdNapiBinding>(require, ZSTD_NATIVE_BINDING, "zstd-napi");

function resolveOr(id: string): string {
  try {
    return require.resolve(id);
  } catch {
    return id; // not installed: the load below fails and the first use says so
  }
}

/** The loaded binding (NATIVE_MODULE_UNAVAILABLE when it did not load). */
export function zstdNapi(): ZstdNapiBinding {
  return binding();
}

let dctx: InstanceType<ZstdNapiBinding["DCtx"]> | null = null;
let cctx: InstanceType<ZstdNapiBinding["CCtx"]> | null = null;

/** Throws NATIVE_MODULE_UNAVAILABLE when zstd-napi did not load (checked before starting workers that load it). */
export function assertZstdNative(): void {
  binding();
}

/**
 * Decode the zstd frames of `src` (skippable frames skipped) into `dst`; returns the bytes written.
 * Throws a plain Error when `src` is corrupt or truncated, or when its output does not fit `dst`
 * (the caller maps it to a code); NATIVE_MODULE_UNAVAILABLE when zstd-napi did not load. Never
 * writes past `dst`.
 *
 * @example const out = Buffer.allocUnsafe(n); decodeInto(out, frame) === n
 */
export function decodeInto(dst: Uint8Array, src: Uint8Array): number {
  dctx ??= new (binding().DCtx)();
  return dctx.decompress(dst, src);
}

/**
 * Compress `data` into one zstd frame at `level`, one-shot (`ZSTD_compressCCtx`): the header
 * carries the content size and no checksum. Synchronous work behind the async signature of a
 * pluggable compressor (see `putBlob`'s `compress`; `ZstdPool.compress` makes the same frames).
 *
 * @example inspectZstd(await compressOneShot(Buffer.from("x"), 19))[0].contentSize // 1
 */
export async function compressOneShot(data: Uint8Array, level: number): Promise<Buffer> {
  const frame = compressFrameSync(data, level);
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
}

/**
 * `compressOneShot`, synchronously (worker threads): the frame in a Uint8Array that owns its
 * ArrayBuffer exactly (never a pooled slice), so it can be transferred to another thread.
 */
export function compressFrameSync(data: Uint8Array, level: number): Uint8Array {
  const lib = binding();
  cctx ??= new lib.CCtx();
  const dst = Buffer.allocUnsafe(lib.compressBound(data.byteLength));
  const n = cctx.compress(dst, data, level);
  // Copy out of the bound-sized buffer so the frame does not pin the slack.
  const frame = new Uint8Array(n);
  frame.set(dst.subarray(0, n));
  return frame;
}
