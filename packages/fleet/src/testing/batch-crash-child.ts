/**
 * Crash child of the batch tests: `diet --all <root>` through `runBatch` (one job), printing one
 * JSON line per finished execution, SIGKILLing itself inside the Nth diet at the step `step`
 * (a DietHook point: the execution is mid-publish). Run by `runCrashChild` from the
 * sources (`NODE_OPTIONS=--import tsx`): a bundle would need the worker modules beside it.
 *   node batch-crash-child.ts <root> <n> <step>
 */
import { runBatch } from "../batch.js";

const [root, nText, step] = process.argv.slice(2) as [string, string, string];
const killAt = Number(nText);
let diets = 0;
process.stdout.write("ready\n");
for await (const item of runBatch(root, "diet", {
  jobs: 1,
  diet: {
    hook: (s) => {
      if (s === "start") diets++;
      if (diets === killAt && s === step) process.kill(process.pid, "SIGKILL");
    },
  },
})) {
  process.stdout.write(JSON.stringify(item) + "\n");
}
