#!/usr/bin/env node
// The CLI from the TypeScript sources, for development in the repo (tsx compiles them on load:
// slower start, always current). The installed command is packages/hankweave-journal/bin, which
// runs the JavaScript of `npm run build` and never tsx.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../src/main.ts");
await main();
