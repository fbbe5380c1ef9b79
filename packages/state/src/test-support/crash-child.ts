/**
 * Test support: a child process for the crash-safety test (bundled and spawned by the shared
 * crash-child helper, `@hankweave-journal/journal/testing`). Usage:
 *   node crash-child.mjs <exec> <seed> <steps> <killAfterAppend>
 * Opens the engine over <exec> with DEFAULT options (continuing whatever is there, detecting the
 * previous child's crashed runs), prints "ready <durability>", then drives a seeded valid scenario,
 * printing "ack <line> <id>" (synchronously, on a pipe) once each transition() has resolved: the
 * acknowledged point. The parent SIGKILLs it at a random moment, or the injected engine hook
 * SIGKILLs it right after the <killAfterAppend>-th transition append (before apply and save; ≤ 0:
 * never).
 */
import { writeSync } from "node:fs";
import { openStateEngine } from "../state-engine.js";
import { scenario, seededChoices } from "./scenario.js";

const [exec, seedText, stepsText, killText] = process.argv.slice(2);
const seed = Number(seedText);
const killAfterAppend = Number(killText ?? "0");
const engine = await openStateEngine(exec, {
  hook: (_point, n) => {
    if (n === killAfterAppend) process.kill(process.pid, "SIGKILL");
  },
});
writeSync(1, `ready ${engine.durability}\n`);
for (const s of scenario(seededChoices(seed, Number(stepsText)), [], { runPrefix: `p${process.pid}-${seed}` })) {
  if (s.kind === "transition") {
    const r = await engine.transition(s.t);
    writeSync(1, `ack ${r.line} ${r.event.id}\n`);
  } else if (s.kind === "plan") await engine.setPlan(s.plan);
  else await engine.append({ type: s.type, data: s.data });
}
await engine.close();
writeSync(1, "done\n");
