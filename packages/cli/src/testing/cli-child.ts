/**
 * Test support: the CLI's entry for a bundled child process (`bundleCli` in
 * `@hankweave-journal/journal/testing`): what `packages/cli/bin/hankweave-journal.js` runs, without
 * the tsx loader (the bundle is built from these sources by the test that spawns it).
 */
import { main } from "../main.js";

await main();
