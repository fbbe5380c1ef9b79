import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compareResultingState, isTerminalStatus, msSameMinute, transitionProblem } from "./fold-helpers.js";

describe("fold helpers", () => {
  it("compares resultingState field by field, to the last bit, with delta = journaled − recomputed", () => {
    const rec = { currentRunId: "r", runCount: 1, totalCost: 0.1 + 0.2, currentRunCost: 0.3 };
    expect(compareResultingState({ ...rec }, rec)).toEqual([]);
    const diffs = compareResultingState({ ...rec, totalCost: 0.3, currentRunId: null }, rec);
    expect(diffs.map((d) => d.field)).toEqual(["currentRunId", "totalCost"]);
    expect(diffs[0].delta).toBeNull();
    expect(diffs[1].delta).toBe(0.3 - (0.1 + 0.2));
    expect(diffs[1].delta).not.toBe(0);
    expect(compareResultingState({ currentRunId: "r", runCount: 1, totalCost: 0.30000000000000004 }, rec)).toEqual([
      { field: "currentRunCost", journaled: null, recomputed: 0.3, delta: null },
    ]);
  });

  it("finds envelope problems of a state.transition and says whether it can still be applied", () => {
    const t = { type: "CodonStarted", data: { runId: "r", codonId: "a" } };
    expect(transitionProblem({ transitionType: "CodonStarted", runId: "r", codonId: "a", transition: t })).toBeNull();
    expect(transitionProblem(null)?.applicable).toBe(false);
    expect(transitionProblem({ transitionType: "CodonStarted" })?.applicable).toBe(false);
    expect(transitionProblem({ transitionType: "RunStarted", transition: t })).toMatchObject({ applicable: true, details: { expected: "CodonStarted", actual: "RunStarted" } });
    expect(transitionProblem({ transitionType: "CodonStarted", runId: "x", transition: t })).toMatchObject({ applicable: true, details: { field: "runId" } });
  });

  it("knows the three terminal statuses", () => {
    expect(["completed", "failed", "skipped", "running", "preparing", undefined].map(isTerminalStatus)).toEqual([true, true, true, false, false, false]);
  });

  it("msSameMinute equals Date.parse (canonical same-minute pairs, hour 24, leap seconds, other formats)", () => {
    const base = Date.parse("2026-03-05T18:50:00.000Z");
    fc.assert(
      fc.property(fc.integer({ min: -200_000, max: 200_000 }), fc.integer({ min: 0, max: 130_000 }), fc.constantFrom("", "x", "24"), (a, d, variant) => {
        const prevTime = new Date(base + a).toISOString();
        let t = new Date(base + a + d - 60_000).toISOString();
        if (variant === "x") t = `${t.slice(0, 17)}6${t.slice(18)}`; // seconds 6x: NaN
        if (variant === "24") t = `${prevTime.slice(0, 11)}24:00:0${d % 2}.000Z`;
        const prev = { time: variant === "24" ? `${prevTime.slice(0, 11)}24:00:00.000Z` : prevTime, ms: 0 };
        prev.ms = Date.parse(prev.time);
        expect(Object.is(msSameMinute(t, prev), Date.parse(t))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    const prev = { time: "2026-03-05T18:50:18.415Z", ms: Date.parse("2026-03-05T18:50:18.415Z") };
    for (const t of ["2026-03-05T18:50:60.000Z", "2026-03-05T18:50:19.4150", "2026-03-05T18:50:19Z", "2026-03-05 18:50:19.000Z", "x"]) {
      expect(Object.is(msSameMinute(t, prev), Date.parse(t)), t).toBe(true);
    }
    expect(msSameMinute("2026-03-05T18:50:19.001Z", prev)).toBe(Date.parse("2026-03-05T18:50:19.001Z"));
  });
});
