/** The repo's WebAssembly modules by name (see build-wasm.mjs). */
export const WASM_MODULES: Record<"json-escape" | "rebuild", { wat: string; out: string; constant: string; features: Record<string, boolean> }>;
/** The bytes of module `name` assembled from the WAT text `wat` (wabt). */
export function assembleWasm(name: "json-escape" | "rebuild", wat: string): Promise<Buffer>;
