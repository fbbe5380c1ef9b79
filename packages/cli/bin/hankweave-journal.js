#!/usr/bin/env node
// Shim: run the prebuilt bundle (rebuilt when the sources are newer, see bundle.mjs); without one,
// register tsx and run the TypeScript sources directly. HANKWEAVE_NO_BUNDLE=1 forces the latter.
import { ensureBundle } from "./bundle.mjs";
const bundle = await ensureBundle();
let main;
if (bundle) ({ main } = await import(bundle));
else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/main.ts"));
}
await main();
