/**
 * Crash safety, for real: a child process appends ~1 KB events under each durability policy and is
 * SIGKILLed at random moments (≥ 100 kills in total, bounded wall time). After each kill: every
 * complete line parses, every acknowledged id is in the journal in order, and repair leaves exactly
 * the complete lines in the journal and the torn bytes in the quarantine file.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyRepair, planRepair } from "./repair.js";
import { readSidecarStatus } from "./sidecar.js";
import type { Durability } from "./writer.js";
import { bundleCrashChild, runCrashChild, type KillPlan } from "./testing/crash-children.js";

const CHILD_SOURCE = fileURLToPath(new URL("./testing/append-child.ts", import.meta.url));
/** The child, bundled once by the shared crash-child helper (testing/crash-children.ts). */
let childBundle = "";
/** Kills per crash loop; PARALLEL loops per policy, three policies: 18 × 2 × 3 = 108 kills. */
const KILLS_PER_LOOP = 18;
const WALL_BUDGET_MS = 90_000;
const PARALLEL = 2;

interface KillOutcome {
  acked: string[];
  readyBeforeKill: boolean;
}

/** Spawn the child, SIGKILL it at a random moment, return the ids it acknowledged. */
async function runAndKill(exec: string, durability: Durability): Promise<KillOutcome> {
  // Kill somewhere in the next 0–250 ms of appending; one kill in eight lands during open
  // (possibly in the middle of a torn-tail repair).
  const plan: KillPlan = { afterReadyMs: Math.floor(Math.random() * 250) };
  if (Math.random() < 0.125) plan.afterSpawnMs = Math.floor(Math.random() * 600);
  const r = await runCrashChild(childBundle, [exec, durability], plan);
  if (!r.killed) throw new Error(`child exited ${r.code}: ${r.stderr}`);
  const lines = r.stdout.split("\n");
  lines.pop(); // a partially written id line is not an acknowledgement we can read
  return { acked: lines.filter((l) => l !== "ready" && l !== "done"), readyBeforeKill: r.ready };
}

interface PolicyReport { kills: number; torn: number; tornByKill: number; acked: number; synthetic: number; repairedAtOpen: number }

async function crashLoop(durability: Durability, deadline: number): Promise<PolicyReport> {
  const exec = mkdtempSync(`${tmpdir()}/hwj-crash-${durability}-`);
  dirs.push(exec);
  const l = layoutOf(exec);
  const report: PolicyReport = { kills: 0, torn: 0, tornByKill: 0, acked: 0, synthetic: 0, repairedAtOpen: 0 };
  const ackedSoFar: string[] = [];
  /** The ids of the journal's complete lines, in order (grown by each round's new lines). */
  const ids: string[] = [];
  let prevComplete = Buffer.alloc(0);
  // A torn write planted by the test (as a kernel crash mid-write could leave) for the next child's open to repair.
  let planted: Buffer | null = null;
  while (report.kills < KILLS_PER_LOOP && Date.now() < deadline) {
    const { acked, readyBeforeKill } = await runAndKill(exec, durability);
    report.kills += 1;
    if (!existsSync(l.journal)) {
      expect(acked).toEqual([]);
      continue;
    }
    const bytes = readFileSync(l.journal);
    // Nothing before this child's start changed.
    expect(bytes.subarray(0, prevComplete.length).equals(prevComplete)).toBe(true);
    const hadPlanted = planted !== null;
    if (planted) {
      // The planted fragment is either still the journal's tail (the child died before repairing)
      // or quarantined byte for byte by the child's writer open.
      const at = prevComplete.length;
      const stillThere = bytes.length === at + planted.length && bytes.subarray(at).equals(planted);
      const quarantined = [0, 1, 2, 3].some((a) => {
        const q = l.tornFragment(at, a);
        return existsSync(q) && readFileSync(q).equals(planted as Buffer);
      });
      if (!stillThere) expect(quarantined).toBe(true);
      if (readyBeforeKill) {
        expect(quarantined).toBe(true);
        report.repairedAtOpen += 1;
      }
      planted = null;
    }
    const cut = bytes.lastIndexOf(10) + 1;
    const complete = bytes.subarray(0, cut);
    const torn = bytes.subarray(cut);
    // Every complete line parses as an envelope. The lines before this child's start were checked
    // after the previous kill and are byte-identical (asserted above): only the new ones are parsed.
    for (const line of complete.subarray(prevComplete.length).toString("utf8").split("\n").slice(0, -1)) {
      const e = JSON.parse(line);
      expect(typeof e.id === "string" && typeof e.timestamp === "string" && e.type === "info" && "data" in e).toBe(true);
      ids.push(e.id);
    }
    // Every acknowledged id is in the journal, in acknowledgement order (a subsequence).
    ackedSoFar.push(...acked);
    report.acked += acked.length;
    let j = 0;
    for (const id of ids) if (j < ackedSoFar.length && id === ackedSoFar[j]) j += 1;
    expect(j).toBe(ackedSoFar.length);
    // Repair: the journal keeps exactly the complete lines, the quarantine holds exactly the torn bytes.
    const plan = await planRepair(exec);
    expect(plan.counts.corruptLines).toBe(0);
    const result = await applyRepair(plan);
    expect(readFileSync(l.journal).equals(complete)).toBe(true);
    if (torn.length > 0) {
      report.torn += 1;
      if (!hadPlanted) report.tornByKill += 1;
      expect(plan.tornTail?.offset).toBe(cut);
      expect(readFileSync(result.quarantined as string).equals(torn)).toBe(true);
    } else {
      expect(result.quarantined).toBeNull();
    }
    prevComplete = Buffer.from(complete);
    if (Math.random() < 0.3) {
      const line = JSON.stringify({ id: "1-planted", timestamp: new Date().toISOString(), type: "info", data: { body: "p".repeat(900) } });
      planted = Buffer.from(line.slice(0, 1 + Math.floor(Math.random() * (line.length - 1))));
      appendFileSync(l.journal, planted);
      report.synthetic += 1;
    }
    const sc = await readSidecarStatus(exec, complete.length);
    expect(sc.status).toBe("ok");
    if (sc.status === "ok") expect(sc.sidecar.totalEvents).toBe(ids.length);
  }
  return report;
}

const dirs: string[] = [];
beforeAll(async () => {
  childBundle = await bundleCrashChild(CHILD_SOURCE, "append-child");
}, 60_000);
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("crash safety under SIGKILL", () => {
  it(`survives ≥ ${3 * PARALLEL * KILLS_PER_LOOP} random SIGKILLs across none, batch and every with nothing acknowledged lost`, async () => {
    const deadline = Date.now() + WALL_BUDGET_MS;
    const policies: Durability[] = ["none", "batch", "every"];
    // Several independent executions per policy run in parallel to keep wall time bounded.
    const reports = await Promise.all(
      policies.flatMap((p) => Array.from({ length: PARALLEL }, () => p)).map(async (p, i) => {
        const r = await crashLoop(p, deadline);
        return { policy: p, i, ...r };
      }),
    );
    const kills = reports.reduce((s, r) => s + r.kills, 0);
    const sum = (rs: typeof reports, k: keyof PolicyReport): number => rs.reduce((s, r) => s + r[k], 0);
    const byPolicy: Record<string, PolicyReport> = {};
    for (const p of policies) {
      const rs = reports.filter((r) => r.policy === p);
      byPolicy[p] = { kills: sum(rs, "kills"), torn: sum(rs, "torn"), tornByKill: sum(rs, "tornByKill"), acked: sum(rs, "acked"), synthetic: sum(rs, "synthetic"), repairedAtOpen: sum(rs, "repairedAtOpen") };
    }
    console.info(`crash safety: ${kills} kills`, JSON.stringify(byPolicy));
    expect(kills).toBeGreaterThanOrEqual(100);
    for (const p of policies) expect(byPolicy[p].acked).toBeGreaterThan(0);
    // Torn tails were quarantined (by repair, and by the writer's open). Tails torn by the kill itself
    // are rare (SIGKILL seldom splits a write(2)); planted ones make sure both paths always run.
    expect(policies.reduce((s, p) => s + byPolicy[p].torn + byPolicy[p].repairedAtOpen, 0)).toBeGreaterThan(0);
    expect(policies.reduce((s, p) => s + byPolicy[p].repairedAtOpen, 0)).toBeGreaterThan(0);
  }, WALL_BUDGET_MS + 20_000);
});
