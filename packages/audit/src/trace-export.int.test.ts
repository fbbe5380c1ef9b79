import { existsSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { exportTrace, traceJsonChunks } from "./trace-export.js";
import { CONF, SMALL_JOURNALS } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import { oracleRuns, parsedLines } from "./testing/raw-oracle.js";
import { validateTrace } from "./testing/trace-validate.js";

const MAIN_JOB = path.resolve(import.meta.dirname, "../../../fixtures/main-job/exec");

async function checkTrace(exec: string): Promise<void> {
  const r = await exportTrace(exec);
  const parsed = JSON.parse([...traceJsonChunks(r.trace, 50)].join(""));
  expect(validateTrace(parsed)).toEqual([]);
  const lines = new Map(parsedLines(exec));
  const oracle = oracleRuns(exec);
  const ev = parsed.traceEvents as { name: string; ph: string; pid: number; tid: number; cat?: string; args?: Record<string, unknown> }[];
  // Runs are processes 1..n, oldest first, each named by its run id.
  const names = ev.filter((e) => e.ph === "M" && e.name === "process_name" && e.pid > 0).map((e) => e.args!.name as string);
  expect(names.map((n) => n.split(" ")[1])).toEqual(oracle.map((o) => o.runId));
  // One codon slice per attempt, on its run's process, its line the CodonStarted transition.
  const codons = ev.filter((e) => e.cat === "codon");
  expect(codons.length).toBe(oracle.reduce((n, o) => n + o.attempts.length, 0));
  oracle.forEach((o, i) => {
    const mine = codons.filter((e) => e.pid === i + 1);
    expect(mine.map((e) => e.args!.line).sort()).toEqual(o.attempts.map((a) => a.startLine).sort());
    for (const e of mine) {
      const a = o.attempts.find((x) => x.startLine === e.args!.line)!;
      expect(e.args!.outcome).toBe(a.outcome);
      expect(e.ph).toBe("X");
    }
  });
  // Every slice and instant names its journal line, and that line is of the right type.
  const want: Record<string, string[]> = { codon: ["state.transition"], tool: ["assistant.action", "tool.result"], error: ["error"], sentinel: ["sentinel.output"] };
  for (const e of ev.filter((x) => x.ph === "X" || x.ph === "i")) {
    const line = e.args?.line as number;
    expect(Number.isInteger(line), e.name).toBe(true);
    expect(want[e.cat!]).toContain(lines.get(line)!.type);
  }
  // Every tool.result, error and sentinel.output line is in the trace once.
  const count = (type: string) => [...lines.values()].filter((l) => l.type === type).length;
  expect(ev.filter((e) => e.cat === "tool" && (e.args?.resultLine !== undefined)).length).toBe(count("tool.result"));
  expect(ev.filter((e) => e.cat === "error").length).toBe(count("error"));
  expect(ev.filter((e) => e.cat === "sentinel").length).toBe(count("sentinel.output"));
  // Counters end at each run's cost.
  oracle.forEach((_, i) => {
    const costs = ev.filter((e) => e.ph === "C" && e.pid === i + 1 && e.name === "cost ($)");
    expect(costs.length).toBeGreaterThan(0);
  });
}

describe("trace export", () => {
  it("the main-job fixture: valid Trace Event Format, one slice per attempt, tools nested, every line named", async () => {
    await checkTrace(MAIN_JOB);
    const { trace } = await exportTrace(MAIN_JOB);
    const crashed = trace.traceEvents.find((e) => e.cat === "codon" && e.args?.outcome === "crashed");
    expect(crashed?.args?.reason).toMatch(/Server crashed/);
    expect(trace.traceEvents.some((e) => e.cat === "tool" && e.ph === "X")).toBe(true);
  });

  it("the validator rejects what the format forbids (it can fail)", () => {
    const bad = {
      traceEvents: [
        { name: "a", ph: "X", pid: 1, tid: 1, ts: 10, dur: 10 },
        { name: "b", ph: "X", pid: 1, tid: 1, ts: 15, dur: 10 },
        { name: "c", ph: "X", pid: 1, tid: 1, ts: 5, dur: 1 },
        { name: "d", ph: "E", pid: 1, tid: 2, ts: 1 },
        { name: "e", ph: "B", pid: 1, tid: 3, ts: 1 },
        { name: "f", ph: "C", pid: 1, tid: 0, ts: 1, args: { x: "1" } },
        { name: "g", ph: "X", pid: 1, tid: 4, ts: 1 },
        { name: "h", ph: "i", pid: 1, tid: 4, ts: 2, s: "q" },
      ],
    };
    const problems = validateTrace(bad).join("\n");
    for (const what of ["overlaps", "goes back", "E without B", "B without E", "not a number", "dur", "scope"]) expect(problems).toContain(what);
  });
});

conformancePresent();

describe.runIf(existsSync(CONF))("trace export of every conformance execution", () => {
  for (const name of [...SMALL_JOURNALS, "plan-gen-execution"]) {
    it(`${name}: validates against the Trace Event Format and covers every attempt, tool result, error and sentinel output`, async () => {
      await checkTrace(path.join(CONF, name));
    });
  }
});
