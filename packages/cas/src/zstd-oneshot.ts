/**
 * One-shot zstd compression (`ZSTD_compress`, through the WebAssembly build of
 * `@bokuweb/zstd-wasm`) for CAS bodies. Why not the native binding: it compresses as a stream of
 * unknown size, so level 19 allocates and clears its full tables (~80 MB) for every body —
 * measured 250 ms for a 5 KB body on this machine. `ZSTD_compress` knows the size and sizes the
 * tables to the body: 15 ms for the same body, the same level and the same output ratio. The
 * frames carry their content size (the size guard then checks it exactly).
 *
 * Synchronous (runs on the main thread while pointer frames compress on the libuv threadpool).
 * The WebAssembly heap grows to the largest body's needs and is kept.
 */
import { createRequire } from "node:module";

interface ZstdWasm {
  init(): Promise<void>;
  compress(buf: Uint8Array, level?: number): Uint8Array;
  decompress(buf: Uint8Array, opts?: { defaultHeapSize: number }): Uint8Array;
}

const wasm = createRequire(import.meta.url)("@bokuweb/zstd-wasm") as ZstdWasm;
let ready: Promise<void> | null = null;

/** Compress `data` into one zstd frame at `level` with its content size in the header. */
export async function compressOneShot(data: Uint8Array, level: number): Promise<Buffer> {
  ready ??= wasm.init();
  await ready;
  const out = wasm.compress(data, level);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** Ready the WebAssembly module (once per process). */
export async function initOneShot(): Promise<void> {
  ready ??= wasm.init();
  await ready;
}

/**
 * Decompress one frame whose header declares its content size, synchronously (`ZSTD_decompress`
 * in WebAssembly: one allocation of exactly that size, reused heap). Call `initOneShot` first.
 * Throws a plain Error on corrupt input (the caller maps it).
 */
export function decompressOneShot(data: Uint8Array): Buffer {
  const out = wasm.decompress(data);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
