/** The module's bytes for the WAT text `wat` (wabt; see build-escape-wasm.mjs). */
export function assembleEscapeWasm(wat: string): Promise<Buffer>;
