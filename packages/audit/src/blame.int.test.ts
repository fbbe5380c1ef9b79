import { cpSync, existsSync, mkdtempSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { codonCost, evolve, initialState, type HankweaveState, type StateTransition } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { foldExecution } from "@hankweave-journal/state";
import { parseBlamePath, readAt } from "./blame-path.js";
import { blameExecution, blameMany } from "./blame.js";
import { CONF, SMALL_JOURNALS } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import { parsedLines } from "./testing/raw-oracle.js";

const MAIN_JOB = path.resolve(import.meta.dirname, "../../../fixtures/main-job/exec");

/** States after every state-relevant raw line, by the pure reducer (structurally shared): [line, state]. */
function statesByLine(exec: string): [number, HankweaveState][] {
  let s = initialState();
  const out: [number, HankweaveState][] = [];
  for (const [line, e] of parsedLines(exec)) {
    if (e.type === "plan.updated" && Array.isArray(e.data?.plan)) s = { ...s, executionPlan: e.data.plan };
    else if (e.type === "state.transition" && e.data?.transition) s = evolve(s, e.data.transition as StateTransition, e.timestamp);
    else continue;
    out.push([line, s]);
  }
  return out;
}

/** The line after which the value at (run ordinal, record, rest) last changed, or null. */
function expectedLastLine(states: [number, HankweaveState][], ord: number | null, ci: number | null, rest: (string | number)[]): number | null {
  const at = (s: HankweaveState): string => {
    const run = ord === null ? null : s.runs[s.runs.length - 1 - ord];
    const root = ord === null ? s : ci === null ? run : run?.codons[ci];
    return JSON.stringify(readAt(root, rest) ?? null) + String(readAt(root, rest) === undefined);
  };
  let prev = at(initialState());
  let last: number | null = null;
  for (const [line, s] of states) {
    const k = at(s);
    if (k !== prev) last = line;
    prev = k;
  }
  return last;
}

/** Paths to blame in `final`: top keys, every run's status/times, the records `pick` chooses. */
function pathsFor(final: HankweaveState, pick: (n: number) => number[]): string[] {
  const out = ["currentRunId", "executionPlan"];
  final.runs.forEach((r, ri) => {
    out.push(`runs[${ri}].status`, `runs[${ri}].startTime`, `run:${r.runId}.endTime`);
    for (const ci of pick(r.codons.length)) {
      const c = r.codons[ci];
      const cost = c.status === "completed" ? "finalCost" : c.status === "failed" || c.status === "skipped" ? "partialCost" : "currentCost";
      out.push(`runs[${ri}].codons[${ci}].status`, `runs[${ri}].codons[${ci}].${cost}`, `runs[${ri}].codons[${ci}].startTime`);
    }
  });
  return out;
}

async function checkExecution(exec: string, pick: (n: number) => number[]): Promise<void> {
  const lines = new Map(parsedLines(exec));
  const states = statesByLine(exec);
  const raw = states.length > 0 ? states[states.length - 1][1] : initialState();
  const rebuilt = await foldExecution(exec);
  const texts = pathsFor(raw, pick);
  const answers = await blameMany(exec, texts);
  // One pass for all equals one pass per path (checked on a few).
  for (const i of [0, Math.floor(texts.length / 2), texts.length - 1]) expect(await blameExecution(exec, texts[i])).toEqual(answers[i]);
  for (const [i, text] of texts.entries()) {
    const b = answers[i];
    if (b instanceof Error) throw b;
    const p = parseBlamePath(text);
    let ord: number | null = null;
    let ci: number | null = null;
    if (p.scope === "run") {
      const ri = p.run.by === "index" ? p.run.index : raw.runs.findIndex((r) => r.runId === (p.run as { runId: string }).runId);
      ord = raw.runs.length - 1 - ri;
      ci = p.codon?.by === "index" ? p.codon.index : null;
    }
    expect(b.last?.line ?? null, `${text}: blamed line`).toBe(expectedLastLine(states, ord, ci, p.rest));
    // The value is rebuild's (carried/exact clock fields included); the journal's own is the raw fold's.
    expect(b.value, `${text}: value`).toEqual(readAt(rebuilt.state, parseIndex(b.resolved)));
    expect(b.journalValue, `${text}: journal value`).toEqual(readAt(raw, parseIndex(b.resolved)));
    if (b.last !== null) {
      const line = lines.get(b.last.line)!;
      expect(b.last.id).toBe(line.id);
      expect(b.last.time).toBe(line.timestamp);
      expect(b.last.transition).toBe(line.type === "state.transition" ? line.data.transition.type : null);
    }
  }
}

function parseIndex(resolved: string): (string | number)[] {
  return [...resolved.matchAll(/([A-Za-z_$][\w$]*)|\[(\d+)\]/g)].map((m) => (m[1] !== undefined ? m[1] : Number(m[2])));
}

const every = (n: number): number[] => [...Array(n).keys()];

describe("blame on the main-job fixture (native journal)", () => {
  it("names the line that last set every run's status and times and every record's status, cost and start", async () => {
    await checkExecution(MAIN_JOB, every);
  });

  it("blames the crashed codon's partialCost on the RunCrashed line, with every increment of currentCost and the running sum", async () => {
    const b = await blameExecution(MAIN_JOB, "run:1776340964513-6i9mv/codon:step-7-implement.partialCost", { history: true });
    expect(b.last?.transition).toBe("RunCrashed");
    expect(b.source.kind).toBe("journal");
    const incs = b.feeds!.history.filter((c) => c.transition === "CostsIncremented");
    expect(incs.length).toBeGreaterThan(3);
    // Each increment's delta is its value minus the previous running sum, and the last sum is the cost.
    let sum = 0;
    for (const c of b.feeds!.history) {
      if (c.transition === "CostsIncremented") expect(c.delta).toBe((c.value as number) - sum);
      if (typeof c.value === "number") sum = c.value;
    }
    expect(sum).toBe(b.value);
    const fold = await foldExecution(MAIN_JOB);
    const run = fold.state.runs.find((r) => r.runId === "1776340964513-6i9mv")!;
    expect(b.value).toBe(codonCost(run.codons[b.resolved.match(/codons\[(\d+)\]/)![1] as unknown as number]));
  });

  it("blames a retried codon's first attempt by @1 and its failure reason on its running→failed line", async () => {
    const b = await blameExecution(MAIN_JOB, "run:1776340964513-6i9mv/codon:step-4-flaky@1.failureReason.message");
    expect(b.value).toBe("Agent process exited with code 1");
    expect(b.last?.edge).toBe("running→failed");
    const second = await blameExecution(MAIN_JOB, "run:1776340964513-6i9mv/codon:step-4-flaky.status");
    expect(second.value).toBe("completed");
    expect(second.resolved).not.toBe(b.resolved.replace(".failureReason.message", ".status"));
  });

  it("gives the same answers on a dieted copy (one transparent reader)", async () => {
    const exec = path.join(mkdtempSync(path.join(os.tmpdir(), "hw-blame-")), "exec");
    cpSync(MAIN_JOB, exec, { recursive: true });
    const plain = await blameExecution(exec, "runs[2].codons[6].partialCost", { history: true });
    await applyDiet(exec);
    const dieted = await blameExecution(exec, "runs[2].codons[6].partialCost", { history: true });
    expect(dieted).toEqual(plain);
  });

  it("refuses a path that does not parse and one the state does not have, with stable codes", async () => {
    await expect(blameExecution(MAIN_JOB, "runs[0].codons[")).rejects.toMatchObject({ code: "BLAME_PATH_INVALID" });
    await expect(blameExecution(MAIN_JOB, "runs[7].status")).rejects.toMatchObject({ code: "BLAME_PATH_NOT_FOUND" });
    await expect(blameExecution(MAIN_JOB, "run:nope/codon:x.status")).rejects.toMatchObject({ code: "BLAME_PATH_NOT_FOUND" });
  });
});

conformancePresent();

describe.runIf(existsSync(CONF))("blame on the conformance executions (foreign journals)", () => {
  for (const name of SMALL_JOURNALS) {
    it(`${name}: every run's and record's blamed line agrees with an independent replay`, async () => {
      await checkExecution(path.join(CONF, name), every);
    });
  }

  it("plan-gen-execution: blamed lines agree with an independent replay (records 0, 8, 16)", async () => {
    await checkExecution(path.join(CONF, "plan-gen-execution"), (n) => [0, 8, n - 1]);
  });

  it("plan-gen-execution: says which fields were carried from state.json or taken from codon.started", async () => {
    const exec = path.join(CONF, "plan-gen-execution");
    const plan = await blameExecution(exec, "executionPlan");
    expect(plan.source.kind).toBe("state.json");
    expect(plan.last).toBeNull();
    expect((plan.value as unknown[]).length).toBe(17);
    expect(plan.journalValue).toEqual([]);
    const start = await blameExecution(exec, "runs[0].startTime");
    expect(start.source.kind).toBe("state.json");
    expect(start.last?.transition).toBe("RunStarted");
    const codon = await blameExecution(exec, "runs[0].codons[0].startTime");
    expect(codon.source.kind).toBe("event-data");
    const started = parsedLines(exec).find(([, e]) => e.type === "codon.started" && e.data.codonId === codon.codonId)!;
    expect(codon.source).toMatchObject({ line: started[0] });
    expect(codon.value).toBe(started[1].data.startTime);
  });
});
