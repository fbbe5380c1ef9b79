/**
 * Synchronous one-shot zstd for the extended diet (libzstd through `zstd-napi`, one context of each
 * kind per thread): compress at a level, and decode into a buffer of exactly the declared size.
 */
import { createRequire } from "node:module";
import { nativeModule } from "@hankweave-journal/core";

interface Binding {
  DCtx: new () => { decompress(dst: Uint8Array, src: Uint8Array): number };
  CCtx: new () => { compress(dst: Uint8Array, src: Uint8Array, level: number): number };
  compressBound(size: number): number;
  getFrameContentSize(src: Uint8Array): number | null;
}

const require = createRequire(import.meta.url);
const binding = nativeModule<Binding>(require, resolveOr("zstd-napi/binding.js"), "zstd-napi");

function resolveOr(id: string): string {
  try {
    return require.resolve(id);
  } catch {
    return id;
  }
}

let cctx: InstanceType<Binding["CCtx"]> | null = null;
let dctx: InstanceType<Binding["DCtx"]> | null = null;

/** The compressor's output space, reused (a fresh compressBound-sized buffer per call cost page faults and GC). */
let cscratch: Buffer | null = null;

/** One zstd frame (content size in the header, no checksum) of `data` at `level`. */
export function zstdCompress(data: Uint8Array, level: number): Buffer {
  const lib = binding();
  cctx ??= new lib.CCtx();
  const bound = lib.compressBound(data.byteLength);
  if (cscratch === null || cscratch.length < bound) cscratch = Buffer.allocUnsafeSlow(Math.max(bound, 1 << 20));
  const n = cctx.compress(cscratch.subarray(0, bound), data, level);
  const out = Buffer.allocUnsafe(n);
  cscratch.copy(out, 0, 0, n);
  return out;
}

/**
 * Decode `src` into a new buffer of exactly `size` bytes. Returns null when `src` is corrupt,
 * truncated, decodes to more than `size` bytes or to fewer (the caller picks the error code).
 */
export function zstdDecodeExact(src: Uint8Array, size: number): Buffer | null {
  const dst = Buffer.allocUnsafe(size);
  return zstdDecodeInto(src, dst) ? dst : null;
}

/**
 * Decode `src` into exactly all of `dst` (a view of a reused buffer: no allocation). False when
 * `src` is corrupt, truncated, or decodes to another size than `dst.length`.
 */
export function zstdDecodeInto(src: Uint8Array, dst: Uint8Array): boolean {
  const lib = binding();
  dctx ??= new lib.DCtx();
  let n: number;
  try {
    n = dctx.decompress(dst, src);
  } catch {
    return false;
  }
  return n === dst.length;
}

/** The content size a zstd frame header declares (null when absent or not a frame). */
export function zstdContentSize(src: Uint8Array): number | null {
  try {
    return binding().getFrameContentSize(src);
  } catch {
    return null;
  }
}
