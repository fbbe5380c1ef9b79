#!/usr/bin/env node
// The installed `hankweave-journal` command: the CLI bundled by `npm run build` (dist/bundle/cli.js,
// built once at build time; nothing is built or written at run time, no TypeScript loader).
import { main } from "../dist/bundle/cli.js";
await main();
