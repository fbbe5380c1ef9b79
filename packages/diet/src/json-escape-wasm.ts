/**
 * The JSON string escaper in WebAssembly SIMD (`json-escape.wat`): the same bytes as the
 * byte-level escaper of `json-escape.ts` (exactly `JSON.stringify` of valid UTF-8 text), 16 bytes
 * at a time. On the bench's CAS bodies (code-like text, 2.6% of bytes escaped) the JavaScript
 * escaper runs at ~170 MB/s per CPU-s (length pass included); this one needs no length pass.
 *
 * The restore worker threads (`restore.worker.ts`) import this same factory.
 * `JSON_ESCAPE_WASM_BASE64` is written by `node tools/build-wasm.mjs json-escape` from the .wat
 * (wabt, a devDependency: nothing assembles at run time); a test checks the two agree.
 */

/** The assembled json-escape.wat (written by tools/build-wasm.mjs). */
export const JSON_ESCAPE_WASM_BASE64 =
  "AGFzbQEAAAABDgJgAn9/AX9gA39/fwF/AwMCAAEFAwEAAQcNAgNtZW0CAANlc2MAAQrxAgJfAQF/IAAtAAAhAiABQdwAOgAAIAJBAUcEfyABIAI6AAEgAUECagUgAUH1ADoAASABQTA6AAIgAUEwOgADIAEgAEEEdi0AgAI6AAQgASAAQQ9xLQCAAjoABSABQQZqCwuOAgMDfwF7A38gAkEiOgAAIAJBAWohBCABQRBrIQUCQANAIAMgBUoNASAAIANq/QAEACEGIAQgBv0LBAAgBv0MICAgICAgICAgICAgICAgIP0mIAb9DCIiIiIiIiIiIiIiIiIiIiL9I/1QIAb9DFxcXFxcXFxcXFxcXFxcXFz9I/1Q/WQhByAHRQRAIARBEGohBCADQRBqIQMMAQsgB2ghCCADIAhqIQMgACADai0AACAEIAhqEAAhBCADQQFqIQMMAAsLAkADQCADIAFPDQEgACADai0AACEJIAktAAAEQCAJIAQQACEEBSAEIAk6AAAgBEEBaiEECyADQQFqIQMMAAsLIARBIjoAACAEQQFqCwt8AgBBAAtgAQEBAQEBAQFidG4BZnIBAQEBAQEBAQEBAQEBAQEBAQEAACIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABcAAAAAEGAAgsQMDEyMzQ1Njc4OWFiY2RlZg==";

/** Bodies larger than this are escaped by the JavaScript escaper (keeps the module's memory small). */
export const WASM_ESCAPE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * A WebAssembly JSON escaper (its own memory, for one thread). `input(n)` is a view of n bytes
 * inside the module's memory to fill with the text (decode straight into it); `escape(n)` escapes
 * those n bytes and returns a view of the result. Views live until the next call. `input` throws a
 * RangeError for n > WASM_ESCAPE_MAX_BYTES.
 */
export interface WasmEscaper {
  input(n: number): Uint8Array;
  escape(n: number): Uint8Array;
}

/**
 * The part of the WebAssembly JS API used here (the project's `lib` has no DOM/WebAssembly
 * declarations). Read from globalThis at each call: it is undefined under `node --jitless`.
 */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: { mem: WasmMemory; esc: (src: number, n: number, dst: number) => number } };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** Offset of the text in the module's memory (below it: the module's tables). */
const SRC = 1024;

/** A new escaper instance (its own memory) for this thread; throws where WebAssembly is unavailable. */
export function createWasmEscaper(base64: string): WasmEscaper {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) throw new Error("WebAssembly is unavailable");
  const { mem, esc } = new api.Instance(new api.Module(Buffer.from(base64, "base64")), {}).exports;
  let u8 = new Uint8Array(mem.buffer);
  const dstOf = (n: number): number => (SRC + n + 15) & ~15;
  return {
    input(n: number): Uint8Array {
      if (n > WASM_ESCAPE_MAX_BYTES) throw new RangeError("body too large for the WebAssembly escaper");
      // Room for the text, its escape (at most 6 bytes a byte, 2 quotes) and one block of slack.
      const need = dstOf(n) + 6 * n + 2 + 16;
      if (need > u8.length) {
        mem.grow(Math.ceil((need - u8.length) / 65536));
        u8 = new Uint8Array(mem.buffer);
      }
      return u8.subarray(SRC, SRC + n);
    },
    escape(n: number): Uint8Array {
      const dst = dstOf(n);
      return u8.subarray(dst, esc(SRC, n, dst));
    },
  };
}

/** createWasmEscaper, or null where WebAssembly is unavailable (`node --jitless`): the caller escapes in JavaScript. */
export function tryCreateWasmEscaper(base64: string): WasmEscaper | null {
  try {
    return createWasmEscaper(base64);
  } catch {
    return null;
  }
}
