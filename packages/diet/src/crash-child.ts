/**
 * Child process of the crash-safety tests (not a test itself): runs a diet or a restore and
 * SIGKILLs itself at the `killAt`-th hook call (between steps, while other I/O may be in flight).
 * `killAt` < 0 never self-kills (the parent kills after a random delay instead).
 * Usage: node crash-child.mjs <diet|restore> <exec> <killAt> <frameTargetBytes>
 */
import { applyDiet } from "./diet.js";
import { restoreJournal } from "./restore.js";

const [op, exec, killAtText, frameText] = process.argv.slice(2);
const killAt = Number(killAtText);
let calls = 0;
const hook = (): void => {
  if (calls++ === killAt) process.kill(process.pid, "SIGKILL");
};
if (op === "diet") await applyDiet(exec, { hook, force: true, frameTargetBytes: Number(frameText) });
// Every other round restores with the worker threads of the fast path (killed with the process).
else await restoreJournal(exec, { hook, workers: Math.abs(killAt) % 2 === 1 ? 2 : 0 });
process.stdout.write(`hooks ${calls}\n`);
