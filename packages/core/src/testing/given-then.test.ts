import { describe, expect, it } from "vitest";
import { given, assertState, deepFreeze, clockAt, T, toRunning, runRecord, stateOf } from "./index.js";

const R = "r1";

describe("given/then", () => {
  it("passes on the exact state and fails when only the key order differs", () => {
    const expected = stateOf([runRecord(R, [])], R);
    expect(() => given([]).when(T.runStarted(R)).then(expected)).not.toThrow();
    const reordered = { currentRunId: R, runs: expected.runs, executionPlan: [] };
    expect(() => given([]).when(T.runStarted(R)).then(reordered)).toThrow(/key order/);
  });

  it("fails when a when step produced a finding", () => {
    expect(() => given([]).when(T.codonStarted(R, "a")).then(stateOf([], null))).toThrow(/did not apply/);
  });

  it("thenDropped fails when the transition applied, or with another code", () => {
    expect(() => given([]).when(T.runStarted(R)).thenDropped("UNKNOWN_RUN")).toThrow(/UNKNOWN_RUN/);
    expect(() => given([]).when(T.codonStarted(R, "a")).thenDropped("UNKNOWN_CODON")).toThrow(/UNKNOWN_CODON/);
    expect(() => given([]).when(T.codonStarted(R, "a")).thenDropped("UNKNOWN_RUN")).not.toThrow();
  });

  it("assertState rejects undefined-valued keys that JSON would hide", () => {
    expect(() => assertState({ a: 1, b: undefined }, { a: 1 })).toThrow(/undefined-valued/);
  });

  it("times bare steps with clockAt(position) and accepts explicit [transition, at] pairs", () => {
    const at = "2030-05-05T05:05:05.005Z";
    const out = given([T.runStarted(R)]).when([T.codonStarted(R, "a"), at], T.codonStarted(R, "b")).fold();
    expect(out.state.runs[0].codons.map((c) => c.startTime)).toEqual([at, clockAt(2)]);
    expect(out.state.runs[0].startTime).toBe(clockAt(0));
  });

  it("freezes what it hands to the reducer, so a mutating reducer would throw", () => {
    const s = deepFreeze({ runs: [{ codons: [{ status: "running" }] }] });
    expect(() => { (s.runs[0].codons[0] as { status: string }).status = "x"; }).toThrow(TypeError);
    const out = given([T.runStarted(R), ...toRunning(R, "a")]).fold();
    expect(Object.isFrozen(out.state.runs[0].codons[0])).toBe(true);
  });
});
