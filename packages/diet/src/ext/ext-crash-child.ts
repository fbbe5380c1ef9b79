/**
 * Child process of the extended diet's crash-safety tests (not a test itself; bundled by the shared
 * crash-child helper): runs an extended diet (tiny blocks and pack frames, so that there are many
 * steps to die between) or a restore, prints `ready` just before it starts, and SIGKILLs itself
 * at the `killAt`-th hook call. `killAt` < 0 never self-kills (the parent may kill it after a
 * delay instead). At the end it prints `hooks <calls> ms <duration of the operation>`.
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
process.stdout.write("ready\n");
const t = performance.now();
if (op === "diet") await applyExtDiet(exec, { hook, force: true, workers: 0, blockTargetBytes: 2048, packFrameTargetBytes: 1024 });
else await restoreJournal(exec, { hook, workers: 0 });
process.stdout.write(`hooks ${calls} ms ${Math.round(performance.now() - t)}\n`);
