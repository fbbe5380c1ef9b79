import { describe, expect, it } from "vitest";
import { given, clockAt, T, META, tokens, sentinel, toRunning, runRecord, stateOf, runningRecord } from "./testing/index.js";
import type { StateTransition } from "./state-types.js";

const R = "r1";
const one = (codon: unknown) => stateOf([runRecord(R, [codon])], R);
const RUNNING = [T.runStarted(R), ...toRunning(R, "a")];
/** A run whose codon "a" failed once and was retried up to running (first record failed, second running). */
const RETRIED = [
  T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "failed", META.failed("preparing")),
  ...toRunning(R, "a"),
];
const FAILED_FIRST = {
  codonId: "a", startTime: clockAt(1), status: "failed", endTime: clockAt(2), failedDuring: "preparing", exitCode: 1,
  failureReason: { type: "api-error", retriable: true, message: "boom" }, partialCost: 0, partialTokens: tokens(),
};

describe("CostsUpdated (first record of the codon, running only)", () => {
  it("replaces currentCost and currentTokens in place", () => {
    given(RUNNING).when(T.costsUpdated(R, "a", 1.5, tokens({ inputTokens: 10, cacheReadTokens: 4 })))
      .then(one(runningRecord("a", 1, { currentCost: 1.5, currentTokens: tokens({ inputTokens: 10, cacheReadTokens: 4 }) })));
  });

  it("does nothing when the FIRST record is not running, even if a later retry is (NO_TARGET_RECORD, info)", () => {
    const out = given(RETRIED).when(T.costsUpdated(R, "a", 9)).thenDropped("NO_TARGET_RECORD");
    expect(out.finding?.severity).toBe("info");
  });
});

describe("CostsIncremented (latest running record)", () => {
  it("adds deltas with floating-point += in journal order (0.1 + 0.2 stays 0.30000000000000004)", () => {
    given(RUNNING).when(
      T.costsIncremented(R, "a", 0.1, tokens({ inputTokens: 1, outputTokens: 2 })),
      T.costsIncremented(R, "a", 0.2, tokens({ cacheCreationTokens: 3, cacheReadTokens: 4 })),
    ).then(one(runningRecord("a", 1, { currentCost: 0.30000000000000004, currentTokens: tokens({ inputTokens: 1, outputTokens: 2, cacheCreationTokens: 3, cacheReadTokens: 4 }) })));
  });

  it("targets the running retry, not the failed first record", () => {
    given(RETRIED).when(T.costsIncremented(R, "a", 0.5))
      .then(stateOf([runRecord(R, [FAILED_FIRST, runningRecord("a", 3, { currentCost: 0.5 })])], R));
  });

  it("does nothing for a codon that is not running", () => {
    given([T.runStarted(R), T.codonStarted(R, "a")]).when(T.costsIncremented(R, "a", 1)).thenDropped("NO_TARGET_RECORD");
  });
});

describe("CodonFinalCostSet (latest running record)", () => {
  it("sets currentCost and currentTokens to the final values", () => {
    given([...RUNNING, T.costsIncremented(R, "a", 0.3)]).when(T.codonFinalCostSet(R, "a", 0.022820249999999997, tokens({ inputTokens: 3 })))
      .then(one(runningRecord("a", 1, { currentCost: 0.022820249999999997, currentTokens: tokens({ inputTokens: 3 }) })));
  });

  it("does nothing once the codon completed", () => {
    given([...RUNNING, T.codonTransitioned(R, "a", "running", "completed", META.completed())])
      .when(T.codonFinalCostSet(R, "a", 1)).thenDropped("NO_TARGET_RECORD");
  });
});

describe("AssistantMessageCountUpdated (first record: running, or skipped already carrying the field)", () => {
  it("sets assistantMessageCount on a running record", () => {
    given(RUNNING).when(T.assistantMessageCountUpdated(R, "a", 5)).then(one(runningRecord("a", 1, { assistantMessageCount: 5 })));
  });

  it("updates a skipped record that carries the field", () => {
    const skipped = {
      codonId: "a", startTime: clockAt(1), status: "skipped", endTime: clockAt(5), skippedDuring: "running", partialCost: 0,
      partialTokens: tokens(), claudePid: 1001, claudeSessionId: "session-1", claudeLogPath: "runs/r/a-claude.log",
      assistantMessageCount: 7,
    };
    given([...RUNNING, T.codonTransitioned(R, "a", "running", "skipped", META.skipped("running"))])
      .when(T.assistantMessageCountUpdated(R, "a", 7)).then(one(skipped));
  });

  it("ignores a skipped record without the field, and a retry behind a failed first record", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "skipped", META.skipped("preparing"))])
      .when(T.assistantMessageCountUpdated(R, "a", 1)).thenDropped("NO_TARGET_RECORD");
    given(RETRIED).when(T.assistantMessageCountUpdated(R, "a", 1)).thenDropped("NO_TARGET_RECORD");
  });
});

describe("ExtensionCountUpdated (first record, running only)", () => {
  it("sets extensionCount on a running record", () => {
    given(RUNNING).when(T.extensionCountUpdated(R, "a", 2)).then(one(runningRecord("a", 1, { extensionCount: 2 })));
  });

  it("ignores a completing-sentinels record", () => {
    given([...RUNNING, T.codonTransitioned(R, "a", "running", "completing-sentinels")])
      .when(T.extensionCountUpdated(R, "a", 2)).thenDropped("NO_TARGET_RECORD");
  });
});

describe("CheckpointCreated (latest record; back-patch only in the matching state)", () => {
  it("rig-setup on a preparing record appends rigSetupCheckpoint", () => {
    given([T.runStarted(R), T.codonStarted(R, "a")]).when(T.checkpointCreated(R, "a", "rig-setup", "rig"))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "preparing", rigSetupCheckpoint: "rig" }));
  });

  it("rig-setup on a starting record without the key appends it (the reference runtime's order)", () => {
    given([T.runStarted(R), T.codonStarted(R, "a", { loopId: "L", iteration: 0, codonIndexInLoop: 0 }), T.codonTransitioned(R, "a", "preparing", "starting")])
      .when(T.checkpointCreated(R, "a", "rig-setup", "rig"))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "starting", loopContext: { loopId: "L", iteration: 0, codonIndexInLoop: 0 }, rigSetupCheckpoint: "rig" }));
  });

  it("rig-setup on a running record replaces an existing key in place, and is ignored without one", () => {
    const withRig = [T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "starting", { checkpointSha: "rig1" }),
      T.codonTransitioned(R, "a", "starting", "initializing", META.initializing()), T.codonTransitioned(R, "a", "initializing", "running", META.running())];
    const out = given(withRig).when(T.checkpointCreated(R, "a", "rig-setup", "rig2")).fold();
    expect(Object.entries(out.state.runs[0].codons[0]).slice(0, 4)).toEqual([
      ["codonId", "a"], ["startTime", clockAt(1)], ["status", "running"], ["rigSetupCheckpoint", "rig2"],
    ]);
    given(RUNNING).when(T.checkpointCreated(R, "a", "rig-setup", "rig")).thenDropped("NO_TARGET_RECORD");
  });

  it.each([
    ["completed", "completionCheckpoint", T.codonTransitioned(R, "a", "running", "completed", META.completed("c1"))],
    ["error", "errorCheckpoint", T.codonTransitioned(R, "a", "running", "failed", META.failed("running"))],
    ["skipped", "skipCheckpoint", T.codonTransitioned(R, "a", "running", "skipped", META.skipped("running"))],
  ] as const)("%s patches %s only on a record in that terminal state", (kind, field, finish) => {
    given(RUNNING).when(T.checkpointCreated(R, "a", kind, "x")).thenDropped("NO_TARGET_RECORD");
    const out = given([...RUNNING, finish]).when(T.checkpointCreated(R, "a", kind, "patched")).fold();
    expect(out.finding).toBeNull();
    expect((out.state.runs[0].codons[0] as unknown as Record<string, unknown>)[field]).toBe("patched");
  });

  it("targets the latest record: a checkpoint for a retried codon does not touch the failed attempt", () => {
    const out = given([T.runStarted(R), T.codonStarted(R, "a"), T.codonTransitioned(R, "a", "preparing", "failed", META.failed("preparing")), T.codonStarted(R, "a")])
      .when(T.checkpointCreated(R, "a", "error", "late")).thenDropped("NO_TARGET_RECORD");
    expect(out.state.runs[0].codons[0]).not.toHaveProperty("errorCheckpoint");
  });

  it("an unknown checkpointType changes nothing", () => {
    given(RUNNING).when(T.checkpointCreated(R, "a", "weird" as "error", "x")).thenDropped("NO_TARGET_RECORD");
  });
});

describe("SentinelStatesUpdated (latest record in starting, initializing, running or completing-sentinels)", () => {
  it("appends sentinels {loaded, totalCost}, then replaces them in place", () => {
    const s1 = [sentinel("obs")];
    const s2 = [sentinel("obs", { llmCallCount: 1, totalTriggers: 1, lastLlmCallAt: clockAt(6), totalCost: 0.5 })];
    given(RUNNING).when(T.sentinelStatesUpdated(R, "a", s1, 0), T.assistantMessageCountUpdated(R, "a", 1), T.sentinelStatesUpdated(R, "a", s2, 0.5))
      .then(one(runningRecord("a", 1, { assistantMessageCount: 1, sentinels: { loaded: s2, totalCost: 0.5 } })));
  });

  it("is ignored for a preparing or terminal codon, and for a codon id without records", () => {
    given([T.runStarted(R), T.codonStarted(R, "a")]).when(T.sentinelStatesUpdated(R, "a", [], 0)).thenDropped("NO_TARGET_RECORD");
    given([...RUNNING, T.codonTransitioned(R, "a", "running", "completed", META.completed())])
      .when(T.sentinelStatesUpdated(R, "a", [], 0)).thenDropped("NO_TARGET_RECORD");
    given(RUNNING).when(T.sentinelStatesUpdated(R, "implement", [], 0)).thenDropped("UNKNOWN_CODON");
  });
});

describe("resultingState (format §4.3)", () => {
  it("recomputes after RunStarted and cost transitions, zeroes currentRunCost after RunCompleted, carries otherwise", () => {
    const steps: StateTransition[] = [
      T.runStarted(R), ...toRunning(R, "a"), T.costsIncremented(R, "a", 0.25), T.costsUpdated(R, "a", 0.5),
      T.codonTransitioned(R, "a", "running", "completed", META.completed()), T.runCompleted(R),
      T.runStarted("r2"), ...toRunning("r2", "b"), T.codonFinalCostSet("r2", "b", 0.125),
      T.codonTransitioned("r2", "b", "running", "failed", META.failed("running")), T.assistantMessageCountUpdated("r2", "b", 1),
    ];
    const out = given(steps).fold();
    const rs = out.resultingStates.map((r) => [r.currentRunId, r.runCount, r.totalCost, r.currentRunCost]);
    expect(rs).toEqual([
      [R, 1, 0, 0], [R, 1, 0, 0], [R, 1, 0, 0], [R, 1, 0, 0], [R, 1, 0, 0],
      [R, 1, 0.25, 0.25], [R, 1, 0.5, 0.5], [R, 1, 0.5, 0.5], [null, 1, 0.5, 0],
      ["r2", 2, 0.5, 0], ["r2", 2, 0.5, 0], ["r2", 2, 0.5, 0], ["r2", 2, 0.5, 0], ["r2", 2, 0.5, 0],
      ["r2", 2, 0.625, 0.125], ["r2", 2, 0.625, 0.125], ["r2", 2, 0.625, 0.125],
    ]);
    // the last step targets a failed record: a no-op, and costs carry
    expect(out.findings.map((f) => f?.code ?? null)).toEqual([...Array(16).fill(null), "NO_TARGET_RECORD"]);
  });
});
