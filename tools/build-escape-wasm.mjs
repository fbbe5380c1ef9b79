#!/usr/bin/env node
// Assemble packages/diet/src/json-escape.wat with wabt (a devDependency) and write the module's
// bytes, base64, into packages/diet/src/json-escape-wasm.ts (what the restore workers load; the
// package needs no wabt at run time). `json-escape.test.ts` checks the two still agree.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabtInit from "wabt";

const watPath = fileURLToPath(new URL("../packages/diet/src/json-escape.wat", import.meta.url));
const outPath = fileURLToPath(new URL("../packages/diet/src/json-escape-wasm.ts", import.meta.url));

/** The module's bytes for the WAT text `wat`. */
export async function assembleEscapeWasm(wat) {
  const wabt = await wabtInit();
  const mod = wabt.parseWat("json-escape.wat", wat, { simd: true });
  try {
    mod.validate();
    return Buffer.from(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bytes = await assembleEscapeWasm(readFileSync(watPath, "utf8"));
  const b64 = bytes.toString("base64");
  const src = readFileSync(outPath, "utf8").replace(/export const JSON_ESCAPE_WASM_BASE64 =\n  "[^"]*";/, `export const JSON_ESCAPE_WASM_BASE64 =\n  "${b64}";`);
  writeFileSync(outPath, src);
  console.log(`json-escape-wasm.ts: ${bytes.length} bytes of WebAssembly`);
}
