import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { bundleCrashChild, runCrashChild, type KillPlan } from "@hankweave-journal/journal/testing";
import { applyDiet } from "./diet.js";
import { verifyDiet } from "./verify-diet.js";
import { ensureRestored } from "./ensure-restored.js";
import { openDietedReader } from "./dieted-reader.js";
import { finishedJournal, linesToBytes, rmExec, tempExec } from "./test-helpers.js";

// Crash safety (format §5.1, §6): SIGKILL a child running diet / restore at random points — at a
// random hook between steps (other I/O in flight) or a random time after it is ready — and check
// after every kill that the directory holds the intact original or a complete verified diet, and
// that a restore never published a partial events.jsonl and left the pair verifying. Bounded:
// ≥ 100 kills and ≤ 85 s per test. The hook range is learnt from the first run that completes, so
// nearly every round ends in a kill inside the work (not in the child's start, not after its end).

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
const KILLS_REQUIRED = 100;
const WALL_MS = 85_000;
const PARALLEL = 4;
const FRAME_BYTES = 4096;
const BODIES = ["a".repeat(6000), "é".repeat(5000), "b\n".repeat(3000), "a".repeat(6000)];
const ORIGINAL = finishedJournal(BODIES, "RunCompleted", 60);
let CHILD = "";

beforeAll(async () => {
  // Bundled once (a plain `node` start per spawn), with the worker modules the child starts beside it.
  CHILD = await bundleCrashChild(path.join(HERE, "crash-child.ts"), "diet-crash-child", {
    workers: [path.join(REPO, "packages/cas/src/zstd.worker.ts"), path.join(HERE, "restore.worker.ts")],
  });
}, 60_000);

/** The invariant after a killed diet: intact original, or a complete verified diet (then restored for the next round). */
async function checkAfterDiet(exec: string): Promise<"original" | "dieted"> {
  const l = layoutOf(exec);
  if (fs.existsSync(l.journal)) {
    expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
    return "original";
  }
  const v = await verifyDiet(exec);
  expect(v.originalBytes).toBe(ORIGINAL.length);
  const r = await openDietedReader(exec);
  expect((await linesToBytes(r)).equals(ORIGINAL)).toBe(true);
  await r.close();
  await ensureRestored(exec);
  expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
  return "dieted";
}

interface LoopResult { kills: number; byHook: number; byTime: number; completed: number; rounds: number; ms: number }

/**
 * Run `op` in children until KILLS_REQUIRED kills (or WALL_MS): two rounds in three kill at a
 * random hook below the number of hooks a completed run made, the third a random time after
 * `ready` within a completed run's duration.
 */
async function crashLoop(op: "diet" | "restore", prepare: (exec: string) => Promise<void>, check: (exec: string) => Promise<void>): Promise<LoopResult> {
  const start = Date.now();
  const res: LoopResult = { kills: 0, byHook: 0, byTime: 0, completed: 0, rounds: 0, ms: 0 };
  let hooks = 0; // learnt from completed runs; 0 = not yet known (let the first run complete)
  let runMs = 0; // the longest completed run's time from `ready` to its end
  const worker = async (): Promise<void> => {
    const exec = tempExec(ORIGINAL);
    await prepare(exec);
    try {
      while (res.kills < KILLS_REQUIRED && Date.now() - start < WALL_MS) {
        const round = res.rounds++;
        const byHook = round % 3 !== 2;
        const killAt = byHook && hooks > 0 ? Math.floor(Math.random() * hooks) : -1;
        const plan: KillPlan = !byHook && hooks > 0 ? { afterReadyMs: Math.random() * runMs } : {};
        // Every other restore round uses the worker threads of the fast path (killed with the process).
        const r = await runCrashChild(CHILD, [op, exec, String(killAt), String(FRAME_BYTES), String(round % 2 === 1 ? 2 : 0)], plan);
        if (r.killed) {
          res.kills++;
          if (killAt >= 0) res.byHook++;
          else res.byTime++;
        } else {
          expect(r.code, r.stderr).toBe(0);
          res.completed++;
          const done = /hooks (\d+) ms (\d+)/.exec(r.stdout);
          hooks = Math.max(hooks, Number(done?.[1] ?? 0));
          runMs = Math.max(runMs, Number(done?.[2] ?? 0));
        }
        await check(exec);
      }
    } finally {
      rmExec(exec);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  res.ms = Date.now() - start;
  return res;
}

describe("crash safety under SIGKILL", () => {
  it("diet: after every kill the directory holds the intact original or a complete verified diet", async () => {
    const outcomes = { original: 0, dieted: 0 };
    const res = await crashLoop("diet", async () => undefined, async (exec) => {
      outcomes[await checkAfterDiet(exec)]++;
    });
    expect(res.kills, JSON.stringify(res)).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(res.byHook).toBeGreaterThan(0);
    expect(res.byTime).toBeGreaterThan(0);
    expect(outcomes.original).toBeGreaterThan(0);
    expect(outcomes.dieted).toBeGreaterThan(0);
  }, 100_000);

  it("restore: a killed restore never publishes a partial events.jsonl, and the pair stays intact and verifying", async () => {
    let published = 0;
    const res = await crashLoop("restore", async (exec) => {
      await applyDiet(exec, { frameTargetBytes: FRAME_BYTES });
    }, async (exec) => {
      const l = layoutOf(exec);
      if (fs.existsSync(l.journal)) {
        expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
        published++;
        fs.rmSync(l.journal); // so the next round restores again
      }
      expect((await verifyDiet(exec)).originalBytes).toBe(ORIGINAL.length);
    });
    expect(res.kills, JSON.stringify(res)).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(res.byHook).toBeGreaterThan(0);
    expect(res.byTime).toBeGreaterThan(0);
    expect(published).toBeGreaterThan(0);
  }, 100_000);
});
