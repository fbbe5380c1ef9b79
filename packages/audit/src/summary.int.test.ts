import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { codonCost } from "@hankweave-journal/core";
import { foldExecution } from "@hankweave-journal/state";
import { summarizeExecution, type ExecutionSummary } from "./summary.js";
import { formatSummary } from "./summary-text.js";
import { CONF, SMALL_JOURNALS } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import { oracleRuns } from "./testing/raw-oracle.js";

const MAIN_JOB = path.resolve(import.meta.dirname, "../../../fixtures/main-job/exec");

/** Check a summary against the raw-line oracle and the state package's fold (independent of the audit fold). */
async function checkAgainstOracle(exec: string, s: ExecutionSummary): Promise<void> {
  const oracle = oracleRuns(exec);
  const fold = await foldExecution(exec, { carry: false });
  expect(s.runs.map((r) => r.run)).toEqual(oracle.map((r) => r.runId));
  expect(s.runs.map((r) => r.run)).toEqual([...fold.state.runs].reverse().map((r) => r.runId));
  s.runs.forEach((r, ri) => {
    const o = oracle[ri];
    const folded = fold.state.runs[fold.state.runs.length - 1 - ri];
    expect(r.status).toBe(o.status);
    expect(r.startLine).toBe(o.startLine);
    expect(r.endLine).toBe(o.endLine);
    expect(r.attempts.map((a) => [a.codon, a.outcome])).toEqual(o.attempts.map((a) => [a.codonId, a.outcome]));
    expect(r.attempts.map((a) => a.cost)).toEqual(folded.codons.map((c) => codonCost(c)));
    let cost = 0;
    for (const c of folded.codons) cost += codonCost(c);
    expect(r.cost).toBe(cost);
    for (const [k, n] of Object.entries(r.outcomes)) expect(n, k).toBe(o.attempts.filter((a) => a.outcome === k).length);
    r.attempts.forEach((a, i) => {
      const oa = o.attempts[i];
      expect(a.startLine).toBe(oa.startLine);
      if (a.outcome === "failed" || a.outcome === "crashed" || a.outcome === "skipped") {
        expect(a.line, `${a.codon} line`).toBe(oa.endLine);
        expect(a.reason).toContain(oa.why);
      } else {
        expect(a.reason).toBeNull();
      }
      expect(a.attempt).toBe(o.attempts.slice(0, i + 1).filter((x) => x.codonId === oa.codonId).length);
    });
    // Groups partition the attempts, in order of their first member.
    const members = r.groups.flatMap((g) => g.members).sort((x, y) => x - y);
    expect(members).toEqual(r.attempts.map((_, i) => i));
    expect(r.groups.map((g) => g.members[0])).toEqual([...r.groups.map((g) => g.members[0])].sort((x, y) => x - y));
  });
}

describe("summary of the main-job fixture", () => {
  it("agrees with the raw lines and the fold: a crashed run, a retried codon, loops and skipped codons", async () => {
    const s = await summarizeExecution(MAIN_JOB);
    await checkAgainstOracle(MAIN_JOB, s);
    const [crashedRun] = s.runs;
    expect(crashedRun.status).toBe("crashed");
    expect(crashedRun.outcomes).toMatchObject({ completed: 8, failed: 1, crashed: 1, skipped: 1, running: 0 });
    const flaky = crashedRun.groups.find((g) => g.codon === "step-4-flaky")!;
    expect(flaky).toMatchObject({ label: "step-4-flaky ×2", retries: 1 });
    const review = crashedRun.groups.find((g) => g.codon === "review")!;
    expect(review).toMatchObject({ label: "review#0..#1", iterations: 2 });
    const text = formatSummary(s);
    expect(text).toContain("crashed   step-7-implement: unknown: Server crashed (during running, exit code -1) → line 945");
    expect(text).toMatch(/skipped   step-9-skim: skipped during running \(its partial cost \$\d+\.\d{4} is not counted/);
    expect(text.split("\n").length).toBeLessThan(40);
  });
});

conformancePresent();

describe.runIf(existsSync(CONF))("summary of every conformance execution", () => {
  for (const name of [...SMALL_JOURNALS, "plan-gen-execution"]) {
    it(`${name}: runs, attempts, outcomes, costs and reason lines agree with the raw lines and the fold`, async () => {
      const exec = path.join(CONF, name);
      await checkAgainstOracle(exec, await summarizeExecution(exec));
    });
  }

  it("budget-loop-replay groups its five loop iterations under one label", async () => {
    const s = await summarizeExecution(path.join(CONF, "budget-loop-replay"));
    expect(s.runs[0].groups.map((g) => g.label)).toEqual(["loop-codon#0..#4", "post-loop-codon"]);
    expect(s.runs[0].groups[0]).toMatchObject({ iterations: 5, retries: 0, outcomes: { completed: 5 } });
  });

  it("budget-on-exceeded-fail-replay shows its failure reason and line", async () => {
    const exec = path.join(CONF, "budget-on-exceeded-fail-replay");
    const s = await summarizeExecution(exec);
    const failed = s.runs.flatMap((r) => r.attempts).filter((a) => a.outcome === "failed");
    expect(failed.length).toBeGreaterThan(0);
    for (const a of failed) expect(formatSummary(s)).toContain(`→ line ${a.line}`);
  });
});

describe("summary on a dieted journal", () => {
  it("is the same as on the plain journal (the transparent reader)", async () => {
    const { applyDiet } = await import("@hankweave-journal/diet");
    const { cpSync, mkdtempSync } = await import("node:fs");
    const os = await import("node:os");
    const exec = path.join(mkdtempSync(path.join(os.tmpdir(), "hw-summary-")), "exec");
    cpSync(MAIN_JOB, exec, { recursive: true });
    const plain = await summarizeExecution(exec);
    await applyDiet(exec);
    const dieted = await summarizeExecution(exec);
    expect(dieted.kind).toBe("dieted");
    expect({ ...dieted, kind: "plain" }).toEqual(plain);
  });
});
