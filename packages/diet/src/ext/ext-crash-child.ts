/**
 * Child process of the extended diet's crash-safety tests (not a test itself): runs an extended
 * diet (tiny blocks and pack frames, so that there are many steps to die between) or a restore
 * and SIGKILLs itself at the `killAt`-th hook call. `killAt` < 0 never self-kills (the parent
 * kills after a random delay instead).
 * Usage: node ext-crash-child.mjs <diet|restore> <exec> <killAt>
 */
import { applyExtDiet } from "./ext-diet.js";
import { restoreJournal } from "../restore.js";

const [op, exec, killAtText] = process.argv.slice(2);
const killAt = Number(killAtText);
let calls = 0;
const hook = (): void => {
  if (calls++ === killAt) process.kill(process.pid, "SIGKILL");
};
if (op === "diet") await applyExtDiet(exec, { hook, force: true, workers: 0, blockTargetBytes: 2048, packFrameTargetBytes: 1024 });
else await restoreJournal(exec, { hook, workers: 0 });
process.stdout.write(`hooks ${calls}\n`);
