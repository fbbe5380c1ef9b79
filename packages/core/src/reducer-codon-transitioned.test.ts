import { describe, expect, it } from "vitest";
import { given, clockAt, T, META, tokens, sentinel, toRunning, runRecord, stateOf, runningRecord } from "./testing/index.js";
import type { CodonStatus, TransitionMetadata } from "./state-types.js";

const R = "r1";
const LC = { loopId: "loop", iteration: 1, codonIndexInLoop: 0 };
const one = (codon: unknown) => stateOf([runRecord(R, [codon])], R);
const tr = (from: CodonStatus, to: CodonStatus, m?: TransitionMetadata) => T.codonTransitioned(R, "a", from, to, m);
const REASON = { type: "api-error", retriable: true, message: "boom" };

describe("CodonTransitioned: the record each target status makes", () => {
  it("→starting builds a FRESH record {codonId, startTime, status, rigSetupCheckpoint, loopContext}", () => {
    given([T.runStarted(R), T.codonStarted(R, "a", LC), T.checkpointCreated(R, "a", "rig-setup", "old")])
      .when(tr("preparing", "starting", { checkpointSha: "rig-sha" }))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "starting", rigSetupCheckpoint: "rig-sha", loopContext: LC }));
  });

  it("→starting without checkpointSha drops a back-patched rigSetupCheckpoint (fresh record, undefined keys vanish)", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), T.checkpointCreated(R, "a", "rig-setup", "old")])
      .when(tr("preparing", "starting"))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "starting" }));
  });

  it("→initializing carries the previous record and adds claudePid, claudeLogPath, previousSessionId", () => {
    given([T.runStarted(R), T.codonStarted(R, "a", LC), tr("preparing", "starting", { checkpointSha: "rig" })])
      .when(tr("starting", "initializing", { ...META.initializing(7, "a.log"), previousSessionId: "prev-s" }))
      .then(one({
        codonId: "a", startTime: clockAt(1), status: "initializing", rigSetupCheckpoint: "rig", loopContext: LC,
        claudePid: 7, claudeLogPath: "a.log", previousSessionId: "prev-s",
      }));
  });

  it("→initializing with an empty previousSessionId leaves the key out (JS truthiness)", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "starting")])
      .when(tr("starting", "initializing", { ...META.initializing(7, "a.log"), previousSessionId: "" }))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "initializing", claudePid: 7, claudeLogPath: "a.log" }));
  });

  it("→running adds claudeSessionId and zeroed counters after the carried keys", () => {
    given([T.runStarted(R)]).when(...toRunning(R, "a")).then(one(runningRecord("a", 1)));
  });

  it("→completing-sentinels changes only the status (sentinels stay loaded, in place)", () => {
    const s = [sentinel("obs")];
    given([T.runStarted(R), ...toRunning(R, "a"), T.sentinelStatesUpdated(R, "a", s, 0)])
      .when(tr("running", "completing-sentinels", { sentinelCount: 1, sentinelIds: ["obs"] }))
      .then(one(runningRecord("a", 1, { status: "completing-sentinels", sentinels: { loaded: s, totalCost: 0 } })));
  });

  it("→completed from completing-sentinels: final fields appended, sentinels renamed in place, budgetExceeded last", () => {
    const s = [sentinel("obs", { totalCost: 0.1 })];
    const budget = { currency: "cost", limit: 1, used: 1.02 };
    given([
      T.runStarted(R), ...toRunning(R, "a"), T.costsIncremented(R, "a", 0.25, tokens({ outputTokens: 9 })),
      T.sentinelStatesUpdated(R, "a", s, 0.1), tr("running", "completing-sentinels"),
    ]).when(tr("completing-sentinels", "completed", { checkpointSha: "done", budgetExceeded: budget }))
      .then(one(runningRecord("a", 1, {
        currentCost: 0.25, currentTokens: tokens({ outputTokens: 9 }), sentinels: { executed: s, totalCost: 0.1 },
        status: "completed", endTime: clockAt(8), exitCode: 0, finalCost: 0.25, finalTokens: tokens({ outputTokens: 9 }),
        resultMessageReceived: false, completionCheckpoint: "done", budgetExceeded: budget,
      })));
  });

  it("→completed from initializing (clean exit, no session): finalCost 0, zero finalTokens", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "starting"), tr("starting", "initializing", META.initializing(7, "a.log"))])
      .when(tr("initializing", "completed", META.completed("sha1")))
      .then(one({
        codonId: "a", startTime: clockAt(1), status: "completed", claudePid: 7, claudeLogPath: "a.log", endTime: clockAt(4),
        exitCode: 0, finalCost: 0, finalTokens: tokens(), resultMessageReceived: true, completionCheckpoint: "sha1",
      }));
  });

  it("→failed from running builds a FRESH record; copies process fields, extensionCount 0 and errorCheckpoint", () => {
    const s = [sentinel("obs")];
    given([
      T.runStarted(R), ...toRunning(R, "a", LC), T.costsIncremented(R, "a", 0.5, tokens({ inputTokens: 2 })),
      T.assistantMessageCountUpdated(R, "a", 3), T.sentinelStatesUpdated(R, "a", s, 0.01),
    ]).when(tr("running", "failed", { ...META.failed("running"), checkpointSha: "err-sha", extensionCount: 4 }))
      .then(one({
        codonId: "a", startTime: clockAt(1), status: "failed", endTime: clockAt(8), failedDuring: "running", exitCode: 1,
        failureReason: REASON, partialCost: 0.5, partialTokens: tokens({ inputTokens: 2 }),
        sentinels: { executed: s, totalCost: 0.01 },
        claudePid: 1001, claudeSessionId: "session-1", claudeLogPath: "runs/r/a-claude.log", loopContext: LC,
        extensionCount: 0, errorCheckpoint: "err-sha",
      }));
  });

  it("→failed from starting: no costs yet (0, zeros), sentinels loaded while starting are not carried", () => {
    given([T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "starting", { checkpointSha: "rig" }), T.sentinelStatesUpdated(R, "a", [sentinel("x")], 0)])
      .when(tr("starting", "failed", META.failed("starting", { exitCode: 0, checkpointSha: "" })))
      .then(one({
        codonId: "a", startTime: clockAt(1), status: "failed", endTime: clockAt(4), failedDuring: "starting", exitCode: 0,
        failureReason: REASON, partialCost: 0, partialTokens: tokens(), rigSetupCheckpoint: "rig",
      }));
  });

  it("→skipped from running: fresh record with assistantMessageCount and skipCheckpoint", () => {
    given([T.runStarted(R), ...toRunning(R, "a"), T.costsIncremented(R, "a", 0.125), T.assistantMessageCountUpdated(R, "a", 2)])
      .when(tr("running", "skipped", META.skipped("running", { checkpointSha: "skip-sha" })))
      .then(one({
        codonId: "a", startTime: clockAt(1), status: "skipped", endTime: clockAt(7), skippedDuring: "running",
        partialCost: 0.125, partialTokens: tokens(), claudePid: 1001, claudeSessionId: "session-1",
        claudeLogPath: "runs/r/a-claude.log", assistantMessageCount: 2, skipCheckpoint: "skip-sha",
      }));
  });

  it("→skipped from preparing with an empty checkpointSha has no skipCheckpoint (truthiness)", () => {
    given([T.runStarted(R), T.codonStarted(R, "a")])
      .when(tr("preparing", "skipped", META.skipped("preparing", { checkpointSha: "" })))
      .then(one({ codonId: "a", startTime: clockAt(1), status: "skipped", endTime: clockAt(2), skippedDuring: "preparing", partialCost: 0, partialTokens: tokens() }));
  });
});

describe("CodonTransitioned: target selection", () => {
  it("targets the LATEST non-terminal record of the codon (a retry), not the first", () => {
    const out = given([
      T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "failed", META.failed("preparing")), T.codonStarted(R, "a"),
    ]).when(tr("preparing", "starting")).fold();
    expect(out.finding).toBeNull();
    expect(out.state.runs[0].codons.map((c) => c.status)).toEqual(["failed", "starting"]);
    expect(out.state.runs[0].codons[1]).toEqual({ codonId: "a", startTime: clockAt(3), status: "starting" });
  });

  it("with every record terminal there is no target: NO_TARGET_RECORD (warning), state unchanged", () => {
    const out = given([T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "skipped", META.skipped("preparing"))])
      .when(tr("preparing", "starting")).thenDropped("NO_TARGET_RECORD");
    expect(out.finding?.severity).toBe("warning");
  });

  it("for a codon without records is dropped with UNKNOWN_CODON", () => {
    given([T.runStarted(R)]).when(tr("preparing", "starting")).thenDropped("UNKNOWN_CODON");
  });

  it("for an unknown run is dropped with UNKNOWN_RUN", () => {
    given([T.runStarted(R)]).when(T.codonTransitioned("ghost", "a", "preparing", "starting")).thenDropped("UNKNOWN_RUN");
  });
});

describe("CodonTransitioned: the transition map and the metadata guards", () => {
  const base = [T.runStarted(R), ...toRunning(R, "a")];
  it.each([
    ["running", "starting"], ["running", "preparing"], ["preparing", "running"], ["completed", "failed"],
    ["failed", "skipped"], ["skipped", "running"], ["running", "paused"], ["bogus", "running"],
  ])("%s → %s is dropped with INVALID_TRANSITION (error)", (from, to) => {
    const out = given(base).when(tr(from as CodonStatus, to as CodonStatus, META.failed("running"))).thenDropped("INVALID_TRANSITION");
    expect(out.finding?.severity).toBe("error");
  });

  it.each([
    ["initializing", { claudeLogPath: "a.log" }, ["claudePid"]],
    ["initializing", { claudePid: "7", claudeLogPath: "a.log" }, ["claudePid"]],
    ["initializing", { claudePid: 7 }, ["claudeLogPath"]],
    ["running", {}, ["claudeSessionId"]],
    ["completed", { checkpointSha: "" }, ["checkpointSha"]],
    ["completed", {}, ["checkpointSha"]],
    ["failed", { failureReason: REASON, failedDuring: "running" }, ["exitCode"]],
    ["failed", { exitCode: 1, failureReason: null, failedDuring: "running" }, ["failureReason"]],
    ["failed", { exitCode: 1, failureReason: REASON }, ["failedDuring"]],
    ["skipped", {}, ["skippedDuring"]],
  ] as const)("→%s with %j is dropped with MISSING_METADATA naming %j", (to, metadata, missing) => {
    const from: CodonStatus = to === "initializing" ? "starting" : to === "running" ? "initializing" : "running";
    const steps = from === "running" ? base : from === "initializing"
      ? [T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "starting"), tr("starting", "initializing", META.initializing())]
      : [T.runStarted(R), T.codonStarted(R, "a"), tr("preparing", "starting")];
    const out = given(steps).when(tr(from, to, metadata as TransitionMetadata)).thenDropped("MISSING_METADATA");
    expect(out.finding?.details?.missing).toEqual(missing);
  });

  it("a CodonTransitioned without metadata to a target that needs some is MISSING_METADATA", () => {
    given(base).when({ type: "CodonTransitioned", data: { runId: R, codonId: "a", from: "running", to: "completed" } }).thenDropped("MISSING_METADATA");
  });

  it("targets needing no metadata apply without any (preparing→starting, running→completing-sentinels)", () => {
    const out = given([T.runStarted(R), ...toRunning(R, "a")])
      .when({ type: "CodonTransitioned", data: { runId: R, codonId: "a", from: "running", to: "completing-sentinels" } }).fold();
    expect(out.finding).toBeNull();
    expect(out.state.runs[0].codons[0].status).toBe("completing-sentinels");
  });
});
