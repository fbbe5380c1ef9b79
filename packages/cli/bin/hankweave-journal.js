#!/usr/bin/env node
// One-line shim: register tsx (TypeScript on Node 20 without a build step) and run main.
import { register } from "tsx/esm/api"; register(); const { main } = await import("../src/main.ts"); await main();
