/**
 * Test support: a child process for the crash-safety test. Usage:
 *   node --import tsx crash-child.ts <exec> <seed> <steps>
 * Opens the engine over <exec> (continuing whatever is there, detecting the previous child's
 * crashed runs), prints "ready", then drives a seeded valid scenario. The parent SIGKILLs it at a
 * random moment, or HANKWEAVE_STATE_KILL_AFTER_APPEND=<n> makes it die right after the n-th
 * transition append (before apply and save).
 */
import { openStateEngine } from "../state-engine.js";
import { scenario, seededChoices } from "./scenario.js";

const [exec, seedText, stepsText] = process.argv.slice(2);
const seed = Number(seedText);
const engine = await openStateEngine(exec, { durability: "none" });
process.stdout.write("ready\n");
for (const s of scenario(seededChoices(seed, Number(stepsText)), [], { runPrefix: `p${process.pid}-${seed}` })) {
  if (s.kind === "transition") await engine.transition(s.t);
  else if (s.kind === "plan") await engine.setPlan(s.plan);
  else await engine.append({ type: s.type, data: s.data });
}
await engine.close();
process.stdout.write("done\n");
