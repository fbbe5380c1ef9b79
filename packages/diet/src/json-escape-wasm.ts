/**
 * The JSON string escaper in WebAssembly SIMD (`json-escape.wat`): the same bytes as the
 * byte-level escaper of `json-escape.ts` (exactly `JSON.stringify` of valid UTF-8 text), 16 bytes
 * at a time. On the bench's CAS bodies (code-like text, 2.6% of bytes escaped) the JavaScript
 * escaper runs at ~170 MB/s per CPU-s (length pass included); this one needs no length pass.
 *
 * Like JSON_ESCAPE_SOURCE, the factory is written once as plain JavaScript (`WASM_ESCAPE_SOURCE`)
 * so the restore worker threads (inline scripts) run the very code the tests check here.
 * `JSON_ESCAPE_WASM_BASE64` is written by `node tools/build-escape-wasm.mjs` from the .wat
 * (wabt, a devDependency: nothing assembles at run time); a test checks the two agree.
 */

/** The assembled json-escape.wat (written by tools/build-escape-wasm.mjs). */
export const JSON_ESCAPE_WASM_BASE64 =
  "AGFzbQEAAAABDgJgAn9/AX9gA39/fwF/AwMCAAEFAwEAAQcNAgNtZW0CAANlc2MAAQrxAgJfAQF/IAAtAAAhAiABQdwAOgAAIAJBAUcEfyABIAI6AAEgAUECagUgAUH1ADoAASABQTA6AAIgAUEwOgADIAEgAEEEdi0AgAI6AAQgASAAQQ9xLQCAAjoABSABQQZqCwuOAgMDfwF7A38gAkEiOgAAIAJBAWohBCABQRBrIQUCQANAIAMgBUoNASAAIANq/QAEACEGIAQgBv0LBAAgBv0MICAgICAgICAgICAgICAgIP0mIAb9DCIiIiIiIiIiIiIiIiIiIiL9I/1QIAb9DFxcXFxcXFxcXFxcXFxcXFz9I/1Q/WQhByAHRQRAIARBEGohBCADQRBqIQMMAQsgB2ghCCADIAhqIQMgACADai0AACAEIAhqEAAhBCADQQFqIQMMAAsLAkADQCADIAFPDQEgACADai0AACEJIAktAAAEQCAJIAQQACEEBSAEIAk6AAAgBEEBaiEECyADQQFqIQMMAAsLIARBIjoAACAEQQFqCwt8AgBBAAtgAQEBAQEBAQFidG4BZnIBAQEBAQEBAQEBAQEBAQEBAQEAACIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABcAAAAAEGAAgsQMDEyMzQ1Njc4OWFiY2RlZg==";

/** Bodies larger than this are escaped by the JavaScript escaper (keeps the module's memory small). */
export const WASM_ESCAPE_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Plain-JS source of `createWasmEscaper(base64)` → `{ input(n), escape(n) }` (and of
 * `tryCreateWasmEscaper`, null instead of throwing where WebAssembly is unavailable): `input(n)` is a view
 * of n bytes inside the module's memory to fill with the text (decode straight into it);
 * `escape(n)` escapes those n bytes and returns a view of the result. Views live until the next
 * call. Throws for n > WASM_ESCAPE_MAX_BYTES.
 */
export const WASM_ESCAPE_SOURCE = `
function createWasmEscaper(base64) {
  const exports = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(base64, "base64")), {}).exports;
  const mem = exports.mem;
  const esc = exports.esc;
  const SRC = 1024;
  let u8 = new Uint8Array(mem.buffer);
  const dstOf = (n) => (SRC + n + 15) & ~15;
  return {
    input(n) {
      if (n > ${WASM_ESCAPE_MAX_BYTES}) throw new RangeError("body too large for the WebAssembly escaper");
      // Room for the text, its escape (at most 6 bytes a byte, 2 quotes) and one block of slack.
      const need = dstOf(n) + 6 * n + 2 + 16;
      if (need > u8.length) {
        mem.grow(Math.ceil((need - u8.length) / 65536));
        u8 = new Uint8Array(mem.buffer);
      }
      return u8.subarray(SRC, SRC + n);
    },
    escape(n) {
      const dst = dstOf(n);
      return u8.subarray(dst, esc(SRC, n, dst));
    },
  };
}
// null where WebAssembly is unavailable (node --jitless): the caller escapes in JavaScript.
function tryCreateWasmEscaper(base64) {
  try {
    return createWasmEscaper(base64);
  } catch {
    return null;
  }
}
`;

/** The escaper of WASM_ESCAPE_SOURCE (the type of what it returns). */
export interface WasmEscaper {
  input(n: number): Uint8Array;
  escape(n: number): Uint8Array;
}

const compiled = new Function(`${WASM_ESCAPE_SOURCE}; return { createWasmEscaper, tryCreateWasmEscaper };`)() as {
  createWasmEscaper: (base64: string) => WasmEscaper;
  tryCreateWasmEscaper: (base64: string) => WasmEscaper | null;
};
/** A new escaper instance (its own memory) for this thread; throws where WebAssembly is unavailable. */
export const createWasmEscaper = compiled.createWasmEscaper;
/** createWasmEscaper, or null where WebAssembly is unavailable (`node --jitless`). */
export const tryCreateWasmEscaper = compiled.tryCreateWasmEscaper;
