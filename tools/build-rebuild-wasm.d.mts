/** The module's bytes for the WAT text `wat` (wabt; see build-rebuild-wasm.mjs). */
export function assembleRebuildWasm(wat: string): Promise<Buffer>;
