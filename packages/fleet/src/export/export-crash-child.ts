/**
 * Crash child of export-crash.int.test.ts: `node child.mjs <root> <out> [<node-api bundle>]` exports
 * <root> into <out> (Parquet). Prints `ready` once it starts exporting; with KILL_AT_PARTITION=n it
 * SIGKILLs itself right after publishing its n-th partition file (the parent kills it at random
 * times otherwise). With a third argument, @duckdb/node-api is required from that file: the same
 * package's JavaScript bundled into one file by the test (a child then starts in about half the
 * CPU: resolving and compiling the package's ~90 modules is most of a child's cost).
 */
import { createRequire } from "node:module";
import { setDuckdbRequirer } from "./duckdb.js";
import { exportExecutions, prepareExportDir } from "./export.js";
import { exportTargets } from "./targets.js";

const [root, out, api] = process.argv.slice(2);
if (api) setDuckdbRequirer(() => createRequire(import.meta.url)(api));
const killAt = Number(process.env.KILL_AT_PARTITION ?? "0");
let published = 0;
const t = await exportTargets(root!);
const dir = await prepareExportDir(out!, process.cwd(), t.execs);
process.stdout.write("ready\n");
const readyAt = performance.now();
const s = await exportExecutions(dir, t.targets, {
  format: "parquet", root: t.root,
  afterPartition: () => {
    published += 1;
    if (published === killAt) process.kill(process.pid, "SIGKILL");
  },
});
process.stdout.write(`done ${s.written} ${s.skipped} ${s.failed} ${Math.round(performance.now() - readyAt)}\n`);
