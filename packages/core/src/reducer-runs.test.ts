import { describe, expect, it } from "vitest";
import { evolveReport, initialState } from "./reducer.js";
import { given, clockAt, T, META, tokens, sentinel, toRunning, runRecord, stateOf, runningRecord } from "./testing/index.js";
import type { StateTransition } from "./state-types.js";

const R = "r1";

describe("RunStarted", () => {
  it("inserts the run first with status running, startTime at, and sets currentRunId", () => {
    given([]).when(T.runStarted(R)).then(stateOf([runRecord(R, [])], R));
  });

  it("puts a second run in front of the first (newest first) and points currentRunId at it", () => {
    const cont = { type: "continuation" as const, source: { runId: R, afterCodon: null, checkpointSha: "abc" }, reason: "retry" as const };
    given([T.runStarted(R), T.runCompleted(R)])
      .when(T.runStarted("r2", { startingConditions: cont, serverPid: 99 }))
      .then(stateOf([
        runRecord("r2", [], { startingConditions: cont, serverPid: 99, startTime: clockAt(2) }),
        runRecord(R, [], { status: "completed", endTime: clockAt(1) }),
      ], "r2"));
  });

  it("keeps initialCheckpoint last in the state object", () => {
    given([T.initialCheckpointSet("init-sha")]).when(T.runStarted(R, {})).then({
      runs: [runRecord(R, [], {}, 1)], currentRunId: R, executionPlan: [], initialCheckpoint: "init-sha",
    });
  });
});

describe("RunCompleted / RunFailed", () => {
  it.each([
    ["RunCompleted", T.runCompleted(R), "completed"],
    ["RunFailed", T.runFailed(R), "failed"],
  ] as const)("%s sets the status, endTime at, and clears currentRunId", (_name, t, status) => {
    given([T.runStarted(R)]).when(t).then(stateOf([runRecord(R, [], { status, endTime: clockAt(1) })], null));
  });

  it("clears currentRunId even when the run does not exist, reporting UNKNOWN_RUN", () => {
    const out = given([T.runStarted(R)]).when(T.runCompleted("ghost")).thenFinding("UNKNOWN_RUN", stateOf([runRecord(R, [])], null));
    expect(out.finding?.severity).toBe("warning");
  });

  it("returns the same object for an unknown run when currentRunId is already null", () => {
    given([T.runStarted(R), T.runFailed(R)]).when(T.runFailed("ghost")).thenDropped("UNKNOWN_RUN");
  });
});

describe("RunCrashed", () => {
  const detected = "2026-02-02T02:02:02.000Z";

  it("crashes the run at detectedAt and fails its running codon with the runtime's crash record", () => {
    const s = [sentinel("obs", { totalCost: 0.25 })];
    given([
      T.runStarted(R), ...toRunning(R, "a", { loopId: "L", iteration: 2, codonIndexInLoop: 0 }),
      T.costsIncremented(R, "a", 0.5, tokens({ inputTokens: 3 })),
      T.sentinelStatesUpdated(R, "a", s, 0.25),
    ]).when(T.runCrashed(R, detected)).then(stateOf([runRecord(R, [{
      codonId: "a", startTime: clockAt(1), status: "failed", endTime: detected, failedDuring: "running", exitCode: -1,
      failureReason: { type: "unknown", retriable: false, message: "Server crashed" },
      partialCost: 0.5, partialTokens: tokens({ inputTokens: 3 }),
      sentinels: { executed: s, totalCost: 0.25 },
      claudePid: 1001, claudeSessionId: "session-1", claudeLogPath: "runs/r/a-claude.log",
      loopContext: { loopId: "L", iteration: 2, codonIndexInLoop: 0 },
    }], { status: "crashed", endTime: detected })], R));
  });

  it("fails a preparing codon with zero partial cost and tokens", () => {
    given([T.runStarted(R), T.codonStarted(R, "a")]).when(T.runCrashed(R, detected, "preparing")).then(stateOf([runRecord(R, [{
      codonId: "a", startTime: clockAt(1), status: "failed", endTime: detected, failedDuring: "preparing", exitCode: -1,
      failureReason: { type: "unknown", retriable: false, message: "Server crashed" }, partialCost: 0, partialTokens: tokens(),
    }], { status: "crashed", endTime: detected })], R));
  });

  it("does not carry sentinels loaded while the codon was only initializing", () => {
    const out = given([
      T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "starting", { checkpointSha: "rig" }),
      T.sentinelStatesUpdated(R, "a", [sentinel("obs")], 0),
      T.codonTransitioned(R, "a", "starting", "initializing", META.initializing(5, "a.log")),
    ]).when(T.runCrashed(R, detected, "initializing")).fold();
    expect(out.state.runs[0].codons[0]).toEqual({
      codonId: "a", startTime: clockAt(1), status: "failed", endTime: detected, failedDuring: "initializing", exitCode: -1,
      failureReason: { type: "unknown", retriable: false, message: "Server crashed" }, partialCost: 0, partialTokens: tokens(),
      rigSetupCheckpoint: "rig", claudePid: 5, claudeLogPath: "a.log",
    });
    expect(Object.keys(out.state.runs[0].codons[0])).not.toContain("sentinels");
  });

  it("changes only the FIRST non-terminal record and leaves terminal ones alone", () => {
    const out = given([
      T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "skipped", META.skipped("preparing")),
      T.codonStarted(R, "b"), T.codonStarted(R, "c"),
    ]).when(T.runCrashed(R, detected)).fold();
    const codons = out.state.runs[0].codons;
    expect(codons.map((c) => c.status)).toEqual(["skipped", "failed", "preparing"]);
    expect(codons[1]).toMatchObject({ codonId: "b", failedDuring: "preparing", exitCode: -1 });
    expect(codons[2]).toEqual({ codonId: "c", startTime: clockAt(4), status: "preparing" });
  });

  it("with no non-terminal record only crashes the run, and keeps currentRunId", () => {
    given([T.runStarted(R)]).when(T.runCrashed(R, detected)).then(stateOf([runRecord(R, [], { status: "crashed", endTime: detected })], R));
  });

  it("of an unknown run is dropped with UNKNOWN_RUN", () => {
    given([T.runStarted(R)]).when(T.runCrashed("ghost", detected)).thenDropped("UNKNOWN_RUN");
  });
});

describe("CodonStarted", () => {
  it("appends a preparing record with startTime at, and loopContext when given", () => {
    const lc = { loopId: "loop", iteration: 0, codonIndexInLoop: 1 };
    given([T.runStarted(R)]).when(T.codonStarted(R, "a"), T.codonStarted(R, "b#0", lc)).then(stateOf([runRecord(R, [
      { codonId: "a", startTime: clockAt(1), status: "preparing" },
      { codonId: "b#0", startTime: clockAt(2), status: "preparing", loopContext: lc },
    ])], R));
  });

  it("appends a new record for a retry and keeps the failed one", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "failed", META.failed("preparing"))])
      .when(T.codonStarted(R, "a"))
      .then(stateOf([runRecord(R, [
        {
          codonId: "a", startTime: clockAt(1), status: "failed", endTime: clockAt(2), failedDuring: "preparing", exitCode: 1,
          failureReason: { type: "api-error", retriable: true, message: "boom" }, partialCost: 0, partialTokens: tokens(),
        },
        { codonId: "a", startTime: clockAt(3), status: "preparing" },
      ])], R));
  });

  it("for an unknown run is dropped with UNKNOWN_RUN", () => {
    given([T.runStarted(R)]).when(T.codonStarted("ghost", "a")).thenDropped("UNKNOWN_RUN");
  });
});

describe("InitialCheckpointSet", () => {
  it("adds initialCheckpoint at the end, then replaces it in place", () => {
    given([]).when(T.initialCheckpointSet("one")).then({ runs: [], currentRunId: null, executionPlan: [], initialCheckpoint: "one" });
    given([T.initialCheckpointSet("one"), T.runStarted(R)]).when(T.initialCheckpointSet("two"))
      .then({ runs: [runRecord(R, [], {}, 1)], currentRunId: R, executionPlan: [], initialCheckpoint: "two" });
  });
});

describe("malformed input", () => {
  it.each([
    ["a non-object", null as unknown, "MALFORMED_TRANSITION"],
    ["an unknown type", { type: "RunPaused", data: { runId: R } }, "UNKNOWN_TRANSITION_TYPE"],
    ["data that is not an object", { type: "RunCompleted", data: "r1" }, "MALFORMED_TRANSITION"],
    ["a missing runId", { type: "CodonStarted", data: { codonId: "a" } }, "MALFORMED_TRANSITION"],
    ["a string costDelta", { type: "CostsIncremented", data: { runId: R, codonId: "a", costDelta: "1", tokensDelta: tokens() } }, "MALFORMED_TRANSITION"],
    ["a token delta without cacheReadTokens", { type: "CostsIncremented", data: { runId: R, codonId: "a", costDelta: 1, tokensDelta: { inputTokens: 1, outputTokens: 1, cacheCreationTokens: 1 } } }, "MALFORMED_TRANSITION"],
    ["a RunCrashed without detectedAt", { type: "RunCrashed", data: { runId: R } }, "MALFORMED_TRANSITION"],
  ])("%s is dropped with %s (error severity), state unchanged", (_name, t, code) => {
    const out = given([T.runStarted(R), ...toRunning(R, "a")]).when(t as StateTransition).thenDropped(code);
    expect(out.finding?.severity).toBe("error");
  });

  it("never throws on a transition whose data is an array", () => {
    const s = initialState();
    expect(evolveReport(s, { type: "RunStarted", data: [] } as unknown as StateTransition, clockAt(0)).state).toBe(s);
  });

  it("the running record reached by toRunning is the documented one", () => {
    given([T.runStarted(R)]).when(...toRunning(R, "a")).then(stateOf([runRecord(R, [runningRecord("a", 1)])], R));
  });
});
