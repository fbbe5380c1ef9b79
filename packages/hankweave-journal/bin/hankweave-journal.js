#!/usr/bin/env node
// The installed `hankweave-journal` command: the JavaScript that `npm run build` emitted to dist/.
import { main } from "../dist/cli/main.js";
await main();
