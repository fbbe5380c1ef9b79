#!/usr/bin/env node
// Assemble the repo's WebAssembly modules with wabt (a devDependency) and write each module's
// bytes, base64, into the TypeScript file its code loads (the package needs no wabt at run time):
//   json-escape: packages/diet/src/json-escape.wat -> json-escape-wasm.ts (the CAS body escaper)
//   rebuild:     packages/diet/src/ext/rebuild.wat -> ext/rebuild-wasm.ts (the extended diet's block rebuild)
// Tests (`json-escape.test.ts`, `ext/block-codec.test.ts`) check each base64 is still its .wat's assembly.
// Usage: node tools/build-wasm.mjs [json-escape|rebuild ...]   (no name: every module)
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import wabtInit from "wabt";

const src = (p) => fileURLToPath(new URL(`../packages/diet/src/${p}`, import.meta.url));

/** Each module: its .wat, the file that holds its base64 and the constant's name, wabt's features. */
export const WASM_MODULES = {
  "json-escape": { wat: src("json-escape.wat"), out: src("json-escape-wasm.ts"), constant: "JSON_ESCAPE_WASM_BASE64", features: { simd: true } },
  rebuild: { wat: src("ext/rebuild.wat"), out: src("ext/rebuild-wasm.ts"), constant: "REBUILD_WASM_BASE64", features: { simd: true, bulk_memory: true, threads: true } },
};

/** The bytes of module `name` assembled from the WAT text `wat`. */
export async function assembleWasm(name, wat) {
  const m = WASM_MODULES[name];
  if (m === undefined) throw new Error(`build-wasm: no module named ${name}`);
  const wabt = await wabtInit();
  const mod = wabt.parseWat(`${name}.wat`, wat, m.features);
  try {
    mod.validate(m.features);
    return Buffer.from(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const names = process.argv.length > 2 ? process.argv.slice(2) : Object.keys(WASM_MODULES);
  for (const name of names) {
    const m = WASM_MODULES[name];
    if (m === undefined) {
      console.error(`build-wasm: no module named ${name} (known: ${Object.keys(WASM_MODULES).join(", ")})`);
      process.exit(2);
    }
    const bytes = await assembleWasm(name, readFileSync(m.wat, "utf8"));
    const pattern = new RegExp(`export const ${m.constant} =\\n  "[^"]*";`);
    const text = readFileSync(m.out, "utf8");
    if (!pattern.test(text)) throw new Error(`build-wasm: ${m.out} has no ${m.constant} to replace`);
    writeFileSync(m.out, text.replace(pattern, `export const ${m.constant} =\n  "${bytes.toString("base64")}";`));
    console.log(`${name}: ${bytes.length} bytes of WebAssembly`);
  }
}
