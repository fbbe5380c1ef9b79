import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { bundleCrashChild, runCrashChild, type KillPlan } from "@hankweave-journal/journal/testing";
import { verifyDiet } from "../verify-diet.js";
import { ensureRestored } from "../ensure-restored.js";
import { openReader } from "../open-reader.js";
import { finishedJournal, linesToBytes, rmExec, tempExec } from "../test-helpers.js";
import { applyExtDiet } from "./ext-diet.js";

// Crash safety of the extended diet (format §5.1, §5.2, §6), on the shared crash-child helper:
// SIGKILL a child running the extended diet / its restore at a random hook (between records,
// frames and the steps of the sequence, other I/O in flight) or at a random moment of the
// operation; after every kill the directory holds the intact original or a complete verified
// diet, and a restore never published a partial events.jsonl. A calibration run counts the
// child's hooks and times the operation, so that every round kills. Bounded: ≥ 100 kills and
// ≤ 100 s per test (the cap is for a loaded machine; an idle one reaches 100 kills well before).

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KILLS_REQUIRED = 100;
const WALL_MS = 100_000;
const PARALLEL = 4;
const BODIES = ["a".repeat(6000), "é".repeat(5000), "b\n".repeat(3000), "a".repeat(6000)];
// A torn final fragment too: it must survive as is.
const ORIGINAL = Buffer.concat([finishedJournal(BODIES, "RunCompleted", 60), Buffer.from('{"id":"1-x","torn":')]);
let child = "";

beforeAll(async () => {
  child = await bundleCrashChild(path.join(HERE, "ext-crash-child.ts"), "ext-crash-child");
}, 60_000);

/** Run the child to its end once: its number of hook calls and the operation's duration. */
async function calibrate(op: "diet" | "restore", prepare: (exec: string) => Promise<void>): Promise<{ hooks: number; ms: number }> {
  const exec = tempExec(ORIGINAL);
  try {
    await prepare(exec);
    const r = await runCrashChild(child, [op, exec, "-1"]);
    expect(r.code, r.stderr).toBe(0);
    const m = /hooks (\d+) ms (\d+)/.exec(r.stdout);
    expect(m).not.toBeNull();
    return { hooks: Number(m?.[1]), ms: Number(m?.[2]) };
  } finally {
    rmExec(exec);
  }
}

async function crashLoop(op: "diet" | "restore", prepare: (exec: string) => Promise<void>, check: (exec: string) => Promise<void>) {
  const { hooks, ms } = await calibrate(op, prepare);
  expect(hooks).toBeGreaterThan(10);
  const start = Date.now();
  let kills = 0;
  let rounds = 0;
  const loop = async () => {
    const exec = tempExec(ORIGINAL);
    await prepare(exec);
    try {
      while (kills < KILLS_REQUIRED && Date.now() - start < WALL_MS) {
        rounds++;
        // One round in ten runs to its end, so the completed operation is checked whatever the
        // machine's load (a timed kill calibrated on an idle run can land before every end);
        // of the rest, two in three die at a hook and the third at a random moment.
        const full = rounds % 10 === 0;
        const byHook = !full && rounds % 3 !== 0;
        const plan: KillPlan = byHook || full ? {} : { afterReadyMs: Math.floor(Math.random() * ms) };
        const r = await runCrashChild(child, [op, exec, String(byHook ? Math.floor(Math.random() * hooks) : -1)], plan);
        if (r.killed) kills++;
        else expect(r.code, r.stderr).toBe(0);
        await check(exec);
      }
    } finally {
      rmExec(exec);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, () => loop()));
  return { kills, rounds };
}

describe("extended diet: crash safety under SIGKILL", () => {
  it("diet: after every kill the directory holds the intact original or a complete verified extended diet", async () => {
    const outcomes = { original: 0, dieted: 0 };
    const res = await crashLoop("diet", async () => undefined, async (exec) => {
      const l = layoutOf(exec);
      if (fs.existsSync(l.journal)) {
        expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
        outcomes.original++;
        return;
      }
      expect(JSON.parse(fs.readFileSync(l.manifest, "utf8")).ext.format).toBe("hwx-columnar");
      expect((await verifyDiet(exec)).originalBytes).toBe(ORIGINAL.length);
      const r = await openReader(exec);
      expect((await linesToBytes(r)).equals(ORIGINAL)).toBe(true);
      await r.close();
      await ensureRestored(exec);
      expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
      outcomes.dieted++;
    });
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(outcomes.original).toBeGreaterThan(0);
    expect(outcomes.dieted).toBeGreaterThan(0);
  }, 150_000);

  it("restore: a killed restore never publishes a partial events.jsonl, and the extended pair stays intact", async () => {
    let published = 0;
    const res = await crashLoop("restore", async (exec) => {
      await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: 2048, packFrameTargetBytes: 1024 });
    }, async (exec) => {
      const l = layoutOf(exec);
      if (fs.existsSync(l.journal)) {
        expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
        published++;
        fs.rmSync(l.journal);
      }
      expect(fs.existsSync(l.dietedJournal) && fs.existsSync(l.manifest)).toBe(true);
      expect((await verifyDiet(exec)).originalBytes).toBe(ORIGINAL.length);
    });
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(published).toBeGreaterThan(0);
  }, 150_000);
});
