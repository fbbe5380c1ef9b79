/**
 * Regenerates `fixtures/state/*` (deterministic: injected clock and randomness).
 *   node --import tsx packages/state/src/test-support/make-fixtures.ts
 * Refuses to overwrite an existing case folder (delete it first on purpose).
 */
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync, readFileSync, chmodSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { layoutOf } from "@hankweave-journal/core";
import { openStateEngine } from "../state-engine.js";
import { META, T } from "./builders.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const OUT = path.join(REPO, "fixtures/state");
const CONF = path.resolve(REPO, "../shared/conformance");

function fresh(name: string): string {
  const dir = path.join(OUT, name);
  if (existsSync(dir)) throw new Error(`${dir} exists: delete it to regenerate`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function nativeRun(exec: string): Promise<void> {
  let ms = Date.parse("2026-02-01T09:00:00.000Z");
  let r = 0;
  const e = await openStateEngine(exec, { durability: "none", now: () => (ms += 250), random: () => ((r = (r * 9301 + 49297) % 233280) / 233280), detectCrash: false, lock: false });
  await e.setPlan([{ codonId: "plan" }, { codonId: "build" }]);
  await e.transition(T.runStarted("run-1", { serverPid: 4242 }));
  for (const c of ["plan", "build"]) {
    await e.transition(T.codonStarted("run-1", c));
    await e.transition(T.codonTransitioned("run-1", c, "preparing", "starting"));
    await e.transition(T.codonTransitioned("run-1", c, "starting", "initializing", META.initializing()));
    await e.transition(T.codonTransitioned("run-1", c, "initializing", "running", META.running(`s-${c}`)));
    await e.append({ type: "assistant.action", data: { codonId: c, action: "message", content: `working on ${c}` } });
    await e.transition(T.costsIncremented("run-1", c, 0.1, { inputTokens: 10, outputTokens: 5, cacheCreationTokens: 0, cacheReadTokens: 0 }));
    await e.transition(T.costsIncremented("run-1", c, 0.2, { inputTokens: 1, outputTokens: 2, cacheCreationTokens: 0, cacheReadTokens: 0 }));
    await e.transition(T.codonTransitioned("run-1", c, "running", "completed", META.completed(`sha-${c}`)));
  }
  await e.transition(T.runCompleted("run-1"));
  await e.close();
}

async function main(): Promise<void> {
  // ok-native: written by our engine; state.json is the fold.
  const ok = fresh("ok-native");
  await nativeRun(ok);
  // stale-state-after-crash: same journal, state.json as saved before the last line (RunCompleted).
  const stale = fresh("stale-state-after-crash");
  cpSync(path.join(ok, ".hankweave"), path.join(stale, ".hankweave"), { recursive: true });
  const s = JSON.parse(readFileSync(layoutOf(stale).state, "utf8"));
  s.runs[0].status = "running";
  delete s.runs[0].endTime;
  s.currentRunId = "run-1";
  writeFileSync(layoutOf(stale).state, JSON.stringify(s, null, 2));
  // corrupt-state-bak-only: state.json truncated mid-write, .bak holds the previous save.
  const corrupt = fresh("corrupt-state-bak-only");
  cpSync(path.join(stale, ".hankweave"), path.join(corrupt, ".hankweave"), { recursive: true });
  writeFileSync(layoutOf(corrupt).stateBak, readFileSync(layoutOf(stale).state));
  writeFileSync(layoutOf(corrupt).state, readFileSync(layoutOf(ok).state, "utf8").slice(0, 200));
  // foreign-no-state: a reference-runtime journal without its state.json.
  const foreign = fresh("foreign-no-state");
  mkdirSync(layoutOf(foreign).eventsDir, { recursive: true });
  const src = path.join(CONF, "budget-on-exceeded-fail-replay/.hankweave/events/events.jsonl");
  writeFileSync(layoutOf(foreign).journal, readFileSync(src));
  chmodSync(layoutOf(foreign).journal, 0o644);
  rmSync(path.join(ok, ".hankweave/runtime.lock"), { force: true });
}

await main();
