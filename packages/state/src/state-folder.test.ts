import { describe, expect, it } from "vitest";
import type { JournalEvent, StateTransition } from "@hankweave-journal/core";
import { StateFolder } from "./state-folder.js";
import { META, T } from "./test-support/builders.js";

const ms0 = Date.parse("2026-03-05T10:00:00.000Z");
const at = (s: number): string => new Date(ms0 + s).toISOString();

/** Feed `items` as consecutive lines; numbers are ms offsets of the line timestamp. */
function fold(items: [number, string, unknown][]): StateFolder {
  const f = new StateFolder();
  items.forEach(([ms, type, data], line) => {
    const event: JournalEvent = { id: `${ms0 + ms}-x`, timestamp: at(ms), type, data };
    f.feed({ line, offset: line * 100, event });
  });
  return f;
}
const st = (t: StateTransition): unknown => ({ transitionType: t.type, transition: t, resultingState: {} });
const toRunning = (codon: string): StateTransition[] => [
  T.codonStarted("r", codon),
  T.codonTransitioned("r", codon, "preparing", "starting"),
  T.codonTransitioned("r", codon, "starting", "initializing", META.initializing()),
  T.codonTransitioned("r", codon, "initializing", "running", META.running()),
];

describe("StateFolder origin", () => {
  it("is native when plan.updated comes first: line timestamps are the clock, nothing reported", () => {
    const f = fold([[0, "plan.updated", { plan: [{ p: 1 }] }], [5, "state.transition", st(T.runStarted("r"))], [9, "codon.started", { codonId: "a", startTime: at(1) }]]);
    const r = f.result();
    expect(r.origin).toBe("native");
    expect(r.state.executionPlan).toEqual([{ p: 1 }]);
    expect(r.state.runs[0].startTime).toBe(at(5));
    expect(r.carried).toEqual([]);
    expect(r.approximated).toEqual([]);
  });

  it("is empty without state events", () => {
    expect(fold([[0, "info", { message: "x" }]]).result().origin).toBe("empty");
  });
});

describe("StateFolder on foreign journals (format §4.4)", () => {
  const journal = (): [number, string, unknown][] => [
    [10, "state.transition", st(T.runStarted("r"))],
    ...toRunning("a").map((t, i): [number, string, unknown] => [20 + i, "state.transition", st(t)]),
    [30, "codon.started", { codonId: "a", startTime: at(15) }],
    [40, "state.transition", st(T.codonTransitioned("r", "a", "running", "failed", META.failed("running")))],
    // retry of the same codon id: a second record
    ...toRunning("a").map((t, i): [number, string, unknown] => [50 + i, "state.transition", st(t)]),
    [60, "codon.started", { codonId: "a", startTime: at(45) }],
    [70, "state.transition", st(T.codonTransitioned("r", "a", "running", "completed", META.completed()))],
    [80, "state.snapshot", { completedCodons: [
      { codonId: "a", startTime: at(45), endTime: at(68), status: "completed" },
      { codonId: "a", startTime: at(15), endTime: at(38), status: "failed" },
    ] }],
    [90, "state.transition", st(T.runCompleted("r"))],
  ];

  it("takes codon times exactly from codon.started and state.snapshot, matching retries by attempt", () => {
    const r = fold(journal()).result();
    expect(r.origin).toBe("foreign");
    const codons = r.state.runs[0].codons as unknown as Record<string, unknown>[];
    expect(codons.map((c) => [c.startTime, c.endTime, c.status])).toEqual([
      [at(15), at(38), "failed"], [at(45), at(68), "completed"],
    ]);
    expect(r.approximated.map((a) => a.path)).toEqual(["runs[0].startTime", "runs[0].endTime", "executionPlan"]);
    expect(r.approximated[0]).toEqual({ path: "runs[0].startTime", source: "line-timestamp", line: 0 });
    expect(r.state.runs[0].startTime).toBe(at(10));
  });

  it("carries run times and executionPlan from a saved state of the same execution, reporting them", () => {
    const saved = { runs: [{ runId: "r", startTime: at(1), endTime: at(89), codons: [] }], currentRunId: null, executionPlan: [{ e: 1 }] };
    const r = fold(journal()).result(saved as never);
    expect(r.state.runs[0].startTime).toBe(at(1));
    expect(r.state.runs[0].endTime).toBe(at(89));
    expect(r.state.executionPlan).toEqual([{ e: 1 }]);
    expect(r.carried.map((c) => c.path)).toEqual(["runs[0].startTime", "runs[0].endTime", "executionPlan"]);
    expect(r.approximated).toEqual([]);
  });

  it("approximates codon times it cannot derive, and treats RunCrashed's detectedAt as exact", () => {
    const r = fold([
      [10, "state.transition", st(T.runStarted("r"))],
      [20, "state.transition", st(T.codonStarted("r", "a"))],
      [30, "state.transition", st({ type: "RunCrashed", data: { runId: "r", detectedAt: at(999), lastCodonStatus: "preparing" } } as never)],
    ]).result();
    const c = r.state.runs[0].codons[0] as unknown as Record<string, unknown>;
    expect(c.endTime).toBe(at(999));
    expect(r.state.runs[0].endTime).toBe(at(999));
    expect(r.approximated.map((a) => a.path)).toEqual(["runs[0].startTime", "runs[0].codons[0].startTime", "executionPlan"]);
  });

  it("keeps reducer findings with the line number and byte offset of their line", () => {
    const f = fold([[0, "state.transition", st(T.runStarted("r"))], [1, "state.transition", st(T.codonStarted("ghost", "a"))]]);
    expect(f.result().findings).toEqual([expect.objectContaining({ code: "UNKNOWN_RUN", line: 1, byteOffset: 100 })]);
  });
});
