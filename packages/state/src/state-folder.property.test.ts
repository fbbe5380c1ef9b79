import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  evolveReport, initialState, nextResultingState,
  type HankweaveState, type JournalEvent, type ResultingState, type StateTransition,
} from "@hankweave-journal/core";
import { anyTransition, validTransitionSequence, type TimedTransition } from "@hankweave-journal/core/testing";
import { StateFolder, transitionOf } from "./state-folder.js";

/** The reference: the pure reducer, chained (state, resultingState, findings). */
function pureFold(steps: readonly TimedTransition[]): { state: HankweaveState; rs: ResultingState | null; findings: string[] } {
  let state = initialState();
  let rs: ResultingState | null = null;
  const findings: string[] = [];
  steps.forEach(([t, at], i) => {
    const r = evolveReport(state, t, at);
    state = r.state;
    rs = nextResultingState(rs, state, t);
    if (r.finding) findings.push(JSON.stringify({ ...r.finding, line: i + 1 }));
  });
  return { state, rs, findings };
}

function event(t: StateTransition, at: string, i: number): JournalEvent {
  return { id: `e${i}`, timestamp: at, type: "state.transition", data: { transition: t } } as JournalEvent;
}

/**
 * Valid sequences with arbitrary (mostly invalid) transitions spliced in at random places (those a
 * state.transition envelope can carry: `{type: string, data: object}`; the others are the folder's
 * INVALID_EVENT, not the reducer's business).
 */
const mixed: fc.Arbitrary<{ steps: TimedTransition[]; peeks: number[] }> = fc
  .tuple(validTransitionSequence(150), fc.array(fc.tuple(fc.nat(), anyTransition()), { maxLength: 25 }), fc.array(fc.nat(), { maxLength: 6 }))
  .map(([valid, extra, peeks]) => {
    const steps = valid.slice();
    for (const [pos, t] of extra) {
      if (transitionOf({ transition: t }) === null) continue;
      const k = steps.length === 0 ? 0 : pos % (steps.length + 1);
      const at = steps[Math.min(k, steps.length - 1)]?.[1] ?? "2026-01-01T00:00:00.000Z";
      steps.splice(k, 0, [t, at]);
    }
    return { steps, peeks: peeks.map((p) => (steps.length === 0 ? 0 : p % steps.length)) };
  });

describe("StateFolder's in-place fold equals the pure reducer", () => {
  it("same state bytes, resultingState and findings, on valid sequences with garbage spliced in (native)", () => {
    fc.assert(fc.property(mixed, ({ steps }) => {
      const folder = new StateFolder();
      folder.feed({ line: 0, event: { id: "p", timestamp: "2026-01-01T00:00:00.000Z", type: "plan.updated", data: { plan: [] } } as JournalEvent });
      steps.forEach(([t, at], i) => folder.feed({ line: i + 1, event: event(t, at, i + 1) }));
      const ref = pureFold(steps);
      const got = folder.result();
      expect(JSON.stringify(got.state)).toBe(JSON.stringify({ ...ref.state, executionPlan: [] }));
      expect(got.resultingState).toEqual(ref.rs);
      expect(got.findings.map((f) => JSON.stringify(f))).toEqual(ref.findings);
    }), { numRuns: 300 });
  });

  it("states handed out mid-fold (result(), rawState) are never mutated by later transitions", () => {
    fc.assert(fc.property(mixed, ({ steps, peeks }) => {
      const folder = new StateFolder();
      const seen: { json: string; state: HankweaveState; raw: HankweaveState; rawJson: string; upTo: number }[] = [];
      steps.forEach(([t, at], i) => {
        folder.feed({ line: i, event: event(t, at, i) });
        if (peeks.includes(i)) {
          const state = folder.result().state;
          const raw = folder.rawState;
          seen.push({ state, json: JSON.stringify(state), raw, rawJson: JSON.stringify(raw), upTo: i + 1 });
        }
      });
      for (const s of seen) {
        expect(JSON.stringify(s.state)).toBe(s.json);
        expect(JSON.stringify(s.raw)).toBe(s.rawJson);
        // and the raw state at that point is the pure fold of the prefix
        expect(s.rawJson).toBe(JSON.stringify(pureFold(steps.slice(0, s.upTo)).state));
      }
      expect(JSON.stringify(folder.rawState)).toBe(JSON.stringify(pureFold(steps).state));
    }), { numRuns: 200 });
  });

  it("resultingState read mid-fold equals the chained one at that point (foreign journal)", () => {
    fc.assert(fc.property(mixed, ({ steps, peeks }) => {
      const folder = new StateFolder();
      let rs: ResultingState | null = null;
      let state = initialState();
      steps.forEach(([t, at], i) => {
        folder.feed({ line: i, event: event(t, at, i) });
        state = evolveReport(state, t, at).state;
        rs = nextResultingState(rs, state, t);
        if (peeks.includes(i)) expect(folder.resultingState).toEqual(rs);
      });
      expect(folder.resultingState).toEqual(rs);
      expect(JSON.stringify(folder.rawState)).toBe(JSON.stringify(state));
    }), { numRuns: 200 });
  });
});
