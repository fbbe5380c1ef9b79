/**
 * Child process of the crash-safety tests (not a test itself): runs a diet or a restore and
 * SIGKILLs itself at the `killAt`-th hook call (between steps, while other I/O may be in flight).
 * `killAt` < 0 never self-kills (the parent kills it a random time after its `ready` line).
 * Prints `ready` once its modules are loaded and `hooks N ms M` when done (M: ms since ready).
 * Usage: node child.mjs <diet|restore> <exec> <killAt> <frameTargetBytes> <workers>
 */
import { applyDiet } from "./diet.js";
import { restoreJournal } from "./restore.js";

const [op, exec, killAtText, frameText, workersText] = process.argv.slice(2);
const killAt = Number(killAtText);
let calls = 0;
const hook = (): void => {
  if (calls++ === killAt) process.kill(process.pid, "SIGKILL");
};
process.stdout.write("ready\n");
const t0 = performance.now();
if (op === "diet") await applyDiet(exec, { hook, force: true, frameTargetBytes: Number(frameText) });
else await restoreJournal(exec, { hook, workers: Number(workersText) });
process.stdout.write(`hooks ${calls} ms ${Math.round(performance.now() - t0)}\n`);
