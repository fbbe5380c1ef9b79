import { describe, expect, it } from "vitest";
import { compareResultingState, isTerminalStatus, transitionProblem } from "./fold-helpers.js";

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
});
