import { describe, expect, it } from "vitest";
import { isJournalError } from "../errors.js";
import { evolve, initialState } from "../reducer.js";
import { T, META, toRunning, clockAt } from "../testing/index.js";
import { parseEvent, safeParseEvent, validateEnvelope } from "./parse-event.js";
import { safeParseState } from "./state-schemas.js";
import { stateTransitionEventDataSchema } from "./transition-schemas.js";

const env = (type: string, data: unknown) => ({ id: "1772736515931-abc123", timestamp: "2026-03-05T18:48:35.931Z", type, data });
const SHA = "a".repeat(64);
const rs = { currentRunId: "r1", runCount: 1, totalCost: 0, currentRunCost: 0 };

describe("safeParseEvent / parseEvent", () => {
  it("flags connection-state types as not journaled (they still parse)", () => {
    for (const type of ["server.ready", "pong", "history.batch", "incomplete.codon"]) {
      const r = safeParseEvent(env(type, {}));
      expect(r.success && r.value).toMatchObject({ category: "connection-state", journaled: false, known: true });
    }
  });

  it("passes an unknown type through unchecked (known: false, journaled: true)", () => {
    const ev = env("future.thing", { anything: [1, 2] });
    const r = parseEvent(ev);
    expect(r).toEqual({ event: ev, category: "unknown", journaled: true, known: false });
    expect(r.event).toBe(ev);
  });

  it("keeps unknown payload fields and returns the input object itself", () => {
    const ev = env("info", { message: "hi", extra: { nested: true } });
    expect(parseEvent(ev).event).toBe(ev);
  });

  it("reads file.updated in both shapes, and as a dieted pointer", () => {
    expect(safeParseEvent(env("file.updated", { path: "a.md", filename: "a.md", content: "body", action: "created" })).success).toBe(true);
    expect(safeParseEvent(env("file.updated", { path: "a.md", sha256: SHA, bytes: 4, source: "agent", action: "modified" })).success).toBe(true);
    expect(safeParseEvent(env("file.updated", { path: "a.md", contentRef: { sha256: SHA, bytes: 4, encoding: "utf-8", ref: "cas" } })).success).toBe(true);
    expect(safeParseEvent(env("file.updated", { path: "a.md", contentRef: { sha256: "../x", bytes: 4, encoding: "utf-8", ref: "cas" } })).success).toBe(false);
    expect(safeParseEvent(env("file.updated", { path: "a.md", sha256: SHA.toUpperCase(), bytes: 4, source: "agent" })).success).toBe(false);
  });

  it("accepts plan.updated with execution-plan entries and rejects a plan that is not a list", () => {
    const plan = [{ codon: { type: "codon", id: "a" }, codonId: "a" }, { codon: { id: "b" }, codonId: "b#0", loopContext: { loopId: "b", iteration: 0, codonIndexInLoop: 0 } }];
    expect(safeParseEvent(env("plan.updated", { plan })).success).toBe(true);
    expect(safeParseEvent(env("plan.updated", { plan: {} })).success).toBe(false);
  });

  it.each([
    ["token.usage without totalCost", env("token.usage", { codonId: "a", inputTokens: 1, outputTokens: 1, cacheCreationTokens: 0, cacheReadTokens: 0 }), "data.totalCost"],
    ["info with a numeric message", env("info", { message: 3 }), "data.message"],
    ["codon.completed with a string cost", env("codon.completed", { codonId: "a", success: true, cost: "1", duration: 1 }), "data.cost"],
    ["a state.transition whose transition misses runId", env("state.transition", { transitionType: "RunCompleted", transition: { type: "RunCompleted", data: {} }, resultingState: rs }), "data.transition.data.runId"],
    ["a state.transition of an unknown transition type", env("state.transition", { transitionType: "RunPaused", transition: { type: "RunPaused", data: {} }, resultingState: rs }), "data.transitionType"],
    ["a CodonTransitioned to an unknown status", env("state.transition", { transitionType: "CodonTransitioned", transition: { type: "CodonTransitioned", data: { runId: "r", codonId: "a", from: "running", to: "paused" } }, resultingState: rs }), "data.transition.data.to"],
  ])("rejects %s with INVALID_EVENT naming %s", (_name, ev, where) => {
    const r = safeParseEvent(ev);
    expect(r.success).toBe(false);
    if (!r.success) {
      expect(r.error.code).toBe("INVALID_EVENT");
      expect(r.issues.join("\n")).toContain(where);
    }
    let thrown: unknown;
    try { parseEvent(ev); } catch (e) { thrown = e; }
    expect(isJournalError(thrown, "INVALID_EVENT")).toBe(true);
  });

  it("rejects a state.transition whose transitionType differs from transition.type", () => {
    const d = { transitionType: "RunFailed", runId: "r", transition: { type: "RunCompleted", data: { runId: "r" } }, resultingState: rs };
    expect(stateTransitionEventDataSchema.safeParse(d).success).toBe(false);
    expect(stateTransitionEventDataSchema.safeParse({ ...d, transitionType: "RunCompleted" }).success).toBe(true);
  });
});

describe("validateEnvelope", () => {
  it("is empty for a good envelope, whatever the payload", () => {
    expect(validateEnvelope(env("token.usage", { nonsense: true }))).toEqual([]);
  });

  it.each([
    ["not an object", "nope"],
    ["an empty id", { ...env("info", {}), id: "" }],
    ["a timestamp without milliseconds", { ...env("info", {}), timestamp: "2026-03-05T18:48:35Z" }],
    ["a numeric type", { ...env("info", {}), type: 7 }],
    ["no data", { id: "1-a", timestamp: "2026-03-05T18:48:35.931Z", type: "info" }],
  ])("reports %s as INVALID_EVENT", (_name, obj) => {
    const f = validateEnvelope(obj);
    expect(f.length).toBeGreaterThan(0);
    expect(f.every((x) => x.code === "INVALID_EVENT" && x.severity === "error")).toBe(true);
  });
});

describe("state.json schema", () => {
  it("accepts every record variant the reducer makes", () => {
    let s = initialState();
    const steps = [
      T.initialCheckpointSet("init"), T.runStarted("r1"), ...toRunning("r1", "a"), T.codonTransitioned("r1", "a", "running", "completed", META.completed()),
      ...toRunning("r1", "b"), T.codonTransitioned("r1", "b", "running", "failed", META.failed("running")),
      T.codonStarted("r1", "c"), T.codonTransitioned("r1", "c", "preparing", "skipped", META.skipped("preparing")),
      T.codonStarted("r1", "d"), T.runCrashed("r1", clockAt(99)), T.runStarted("r2"), ...toRunning("r2", "e"),
      T.codonTransitioned("r2", "e", "running", "completing-sentinels"), T.codonStarted("r2", "f"),
    ];
    steps.forEach((t, i) => { s = evolve(s, t, clockAt(i)); });
    const statuses = s.runs.flatMap((r) => r.codons.map((c) => c.status));
    expect(statuses).toEqual(["completing-sentinels", "preparing", "completed", "failed", "skipped", "failed"]);
    const r = safeParseState(s);
    expect(r.success ? [] : r.issues).toEqual([]);
    expect(r.success && r.state).toBe(s);
  });

  it.each([
    ["runs missing", { currentRunId: null, executionPlan: [] }],
    ["currentRunId a number", { runs: [], currentRunId: 3, executionPlan: [] }],
    ["a completed record without completionCheckpoint", { runs: [{ runId: "r", runFolder: "/r", gitBranch: "run-r", startingConditions: { type: "fresh" }, status: "running", startTime: clockAt(0), serverPid: 1, codons: [{ codonId: "a", startTime: clockAt(1), status: "completed", endTime: clockAt(2), exitCode: 0, finalCost: 0, finalTokens: { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 }, resultMessageReceived: true }] }], currentRunId: null, executionPlan: [] }],
    ["a codon with an unknown status", { runs: [{ runId: "r", runFolder: "/r", gitBranch: "run-r", startingConditions: { type: "fresh" }, status: "running", startTime: clockAt(0), serverPid: 1, codons: [{ codonId: "a", startTime: clockAt(1), status: "paused" }] }], currentRunId: null, executionPlan: [] }],
  ])("rejects a state with %s as STATE_CORRUPT", (_name, obj) => {
    const r = safeParseState(obj);
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.code).toBe("STATE_CORRUPT");
  });
});
