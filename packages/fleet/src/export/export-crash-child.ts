/**
 * Crash child of export-crash.int.test.ts: `node child.mjs <root> <out>` exports <root> into <out>
 * (Parquet). Prints `ready` once it starts exporting; with KILL_AT_PARTITION=n it SIGKILLs itself
 * right after publishing its n-th partition file (the parent kills it at random times otherwise).
 */
import { exportExecutions, exportTargets, prepareExportDir } from "../index.js";

const [root, out] = process.argv.slice(2);
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
