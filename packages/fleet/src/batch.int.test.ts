/**
 * Batch work over a fleet: a broken journal, a live lock held by another process, an unfinished
 * run, an already-dieted execution and finished ones; one SIGKILL of the batch mid-diet, then a
 * re-run finishes the job; nothing is lost (every journal byte compared before/after).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { runCrashChild } from "@hankweave-journal/journal/testing";
import { runBatch, summarizeBatch, type BatchItem } from "./batch.js";
import { classifyExecution } from "./discover.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIX = path.resolve(HERE, "../../../fixtures/diet");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-batch-"));
let sleeper: ChildProcess;
// One spawn only: run from the sources through tsx (a bundle would need the worker modules beside it).
const CHILD = path.join(HERE, "testing/batch-crash-child.ts");
const FINISHED = ["fin-1", "fin-2", "g/fin-3", "g/h/fin-4"];

beforeAll(() => {
  sleeper = spawn("sleep", ["120"], { stdio: "ignore" });
});
afterAll(() => {
  sleeper.kill("SIGKILL");
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** sha256 of every file under `dir`, by relative path. */
function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash("sha256").update(fs.readFileSync(p)).digest("hex");
    }
  };
  walk(dir);
  return out;
}

async function collect(gen: AsyncIterable<BatchItem>): Promise<Record<string, [string, string | null]>> {
  const out: Record<string, [string, string | null]> = {};
  for await (const i of gen) out[i.rel] = [i.outcome, i.code];
  return out;
}

async function makeFleet(root: string): Promise<void> {
  for (const f of FINISHED) fs.cpSync(path.join(FIX, "ok-finished-run"), path.join(root, f), { recursive: true });
  fs.cpSync(path.join(FIX, "running-run"), path.join(root, "running"), { recursive: true });
  fs.cpSync(path.join(FIX, "ok-finished-run"), path.join(root, "dieted"), { recursive: true });
  await applyDiet(path.join(root, "dieted"));
  fs.cpSync(path.join(FIX, "ok-finished-run"), path.join(root, "live"), { recursive: true });
  // Another process (a `sleep`) holds the lock, heartbeat fresh: live.
  const now = new Date().toISOString();
  fs.writeFileSync(layoutOf(path.join(root, "live")).lock, JSON.stringify({ pid: sleeper.pid, lockId: "held", runId: null, startTime: now, lastHeartbeat: now }));
  fs.mkdirSync(layoutOf(path.join(root, "broken")).eventsDir, { recursive: true });
  fs.writeFileSync(layoutOf(path.join(root, "broken")).dietedJournal, "not zstd");
}

describe("runBatch", () => {
  it("gives each execution its own line and code, survives a SIGKILL mid-diet, and a re-run finishes without losing a byte", async () => {
    const root = path.join(tmp, "fleet");
    await makeFleet(root);
    const original = fs.readFileSync(path.join(FIX, "ok-finished-run/.hankweave/events/events.jsonl"));
    const before = hashTree(root);

    // A dry run decides like the real run and changes nothing.
    const dry = await collect(runBatch(root, "diet", { dryRun: true, jobs: 2 }));
    expect(dry).toEqual({
      ...Object.fromEntries(FINISHED.map((f) => [f, ["ok", null]])),
      running: ["skipped", "RUN_NOT_FINISHED"], live: ["skipped", "LOCK_HELD"], dieted: ["skipped", "ALREADY_DIETED"], broken: ["failed", "HALF_PAIR"],
    });
    expect(hashTree(root)).toEqual(before);

    // SIGKILL inside the third diet, between renaming events.jsonl.zst and the manifest.
    const run = await runCrashChild(CHILD, [root, "3", "renamed-zst"], { afterSpawnMs: 30_000, env: { NODE_OPTIONS: "--import tsx" } });
    expect(run.killed, run.stderr + run.stdout).toBe(true);
    const doneBeforeKill = run.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as BatchItem).filter((i) => i.outcome === "ok");
    expect(doneBeforeKill).toHaveLength(2);

    // The re-run (two jobs) finishes: the two done are skipped, the killed one and the rest dieted.
    const items: BatchItem[] = [];
    for await (const i of runBatch(root, "diet", { jobs: 2 })) items.push(i);
    const byRel = Object.fromEntries(items.map((i) => [i.rel, [i.outcome, i.code]]));
    const done = new Set(doneBeforeKill.map((i) => i.rel));
    expect(byRel).toEqual({
      ...Object.fromEntries(FINISHED.map((f) => [f, done.has(f) ? ["skipped", "ALREADY_DIETED"] : ["ok", null]])),
      running: ["skipped", "RUN_NOT_FINISHED"], live: ["skipped", "LOCK_HELD"], dieted: ["skipped", "ALREADY_DIETED"], broken: ["failed", "HALF_PAIR"],
    });
    expect(summarizeBatch("diet", items, false, false)).toMatchObject({ executions: 8, ok: 2, skipped: 5, failed: 1 });
    for (const f of FINISHED) {
      const e = await classifyExecution(path.join(root, f));
      expect([f, e.kind]).toEqual([f, "compatible"]);
      // No temp, no lock left behind by the killed diet.
      expect(fs.readdirSync(layoutOf(path.join(root, f)).eventsDir).sort()).toEqual(["cas", "events.jsonl.zst", "journal.meta.json"]);
      expect(fs.existsSync(layoutOf(path.join(root, f)).lock)).toBe(false);
    }

    // Nothing lost: untouched executions are byte-identical, dieted ones restore to the original bytes.
    const after = hashTree(root);
    for (const [p, h] of Object.entries(before)) {
      if (FINISHED.some((f) => p.startsWith(`${f}/`))) continue;
      expect([p, after[p]]).toEqual([p, h]);
    }
    expect(await collect(runBatch(root, "restore", { jobs: 2 }))).toMatchObject(Object.fromEntries(FINISHED.map((f) => [f, ["ok", null]])));
    for (const f of FINISHED) expect(fs.readFileSync(layoutOf(path.join(root, f)).journal).equals(original)).toBe(true);

    // verify --all: the broken one fails with its code, the live one is verified (read-only).
    const v = await collect(runBatch(root, "verify", { jobs: 2 }));
    expect(v.broken).toEqual(["failed", "HALF_PAIR"]);
    expect(v.live).toEqual(["ok", null]);
    expect(v["fin-1"]).toEqual(["ok", null]);
  });

  it("filters by the newest run's status before doing anything, and starts nothing once interrupted", async () => {
    const root = path.join(tmp, "filtered");
    fs.cpSync(path.join(FIX, "ok-finished-run"), path.join(root, "done"), { recursive: true });
    fs.cpSync(path.join(FIX, "running-run"), path.join(root, "running"), { recursive: true });
    expect(await collect(runBatch(root, "verify", { filter: { status: ["running"] } }))).toEqual({ running: ["ok", null] });
    expect(await collect(runBatch(root, "diet", { filter: { finishedBeforeMs: Date.parse("2020-01-01") } }))).toEqual({});
    // Interrupted before it starts (Ctrl-C): nothing is started, nothing changes.
    const stop = new AbortController();
    stop.abort();
    expect(await collect(runBatch(root, "diet", { signal: stop.signal }))).toEqual({});
    expect(fs.existsSync(layoutOf(path.join(root, "done")).journal)).toBe(true);
  });
});
