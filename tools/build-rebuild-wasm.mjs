#!/usr/bin/env node
// Assemble packages/diet/src/ext/rebuild.wat with wabt (a devDependency) and write the module's
// bytes, base64, into packages/diet/src/ext/rebuild-wasm.ts (what the extended diet's decoders load;
// the package needs no wabt at run time). `rebuild-wasm.test.ts` checks the two still agree.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabtInit from "wabt";

const watPath = fileURLToPath(new URL("../packages/diet/src/ext/rebuild.wat", import.meta.url));
const outPath = fileURLToPath(new URL("../packages/diet/src/ext/rebuild-wasm.ts", import.meta.url));

/** The module's bytes for the WAT text `wat`. */
export async function assembleRebuildWasm(wat) {
  const wabt = await wabtInit();
  const mod = wabt.parseWat("rebuild.wat", wat, { simd: true, bulk_memory: true });
  try {
    mod.validate();
    return Buffer.from(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await assembleRebuildWasm(readFileSync(watPath, "utf8"));
  const b64 = bytes.toString("base64");
  const src = readFileSync(outPath, "utf8").replace(/export const REBUILD_WASM_BASE64 =\n  "[^"]*";/, `export const REBUILD_WASM_BASE64 =\n  "${b64}";`);
  writeFileSync(outPath, src);
  console.log(`rebuild-wasm.ts: ${bytes.length} bytes of WebAssembly`);
}
