import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { evolveReport, initialState, nextResultingState, totalCost, currentRunCost } from "./reducer.js";
import { anyTransition, deepFreeze, validTransitionSequence, clockAt, type TimedTransition } from "./testing/index.js";
import type { HankweaveState, ResultingState } from "./state-types.js";
import { isTerminalCodonStatus } from "./transition-map.js";

interface Folded { state: HankweaveState; rs: ResultingState | null; chain: ResultingState[]; codes: (string | null)[] }

function foldFrom(start: Folded, steps: readonly TimedTransition[]): Folded {
  let { state, rs } = start;
  const chain = start.chain.slice();
  const codes = start.codes.slice();
  for (const [t, at] of steps) {
    const r = evolveReport(state, t, at);
    state = r.state;
    codes.push(r.finding?.code ?? null);
    rs = nextResultingState(rs, state, t);
    chain.push(rs);
  }
  return { state, rs, chain, codes };
}
const empty = (): Folded => ({ state: initialState(), rs: null, chain: [], codes: [] });
const RUNS = { numRuns: 150 };

describe("folding generated valid transition sequences", () => {
  it("applies every step without a finding", () => {
    fc.assert(fc.property(validTransitionSequence(), (steps) => {
      expect(foldFrom(empty(), steps).codes.filter((c) => c !== null)).toEqual([]);
    }), RUNS);
  });

  it("in one pass equals folding in chunks (state and resultingState chain)", () => {
    const arb = validTransitionSequence().chain((steps) =>
      fc.tuple(fc.constant(steps), fc.uniqueArray(fc.nat({ max: steps.length }), { maxLength: 4 })));
    fc.assert(fc.property(arb, ([steps, cuts]) => {
      const whole = foldFrom(empty(), steps);
      const bounds = [0, ...cuts.sort((a, b) => a - b), steps.length];
      let acc = empty();
      for (let i = 0; i + 1 < bounds.length; i++) acc = foldFrom(acc, steps.slice(bounds[i], bounds[i + 1]));
      expect(JSON.stringify(acc.state)).toBe(JSON.stringify(whole.state));
      expect(acc.chain).toEqual(whole.chain);
    }), RUNS);
  });

  it("continuing from a state.json round trip (JSON.stringify → JSON.parse) equals the in-memory fold", () => {
    const arb = validTransitionSequence().chain((steps) => fc.tuple(fc.constant(steps), fc.nat({ max: steps.length })));
    fc.assert(fc.property(arb, ([steps, cut]) => {
      const whole = foldFrom(empty(), steps);
      const head = foldFrom(empty(), steps.slice(0, cut));
      const reloaded = { ...head, state: JSON.parse(JSON.stringify(head.state, null, 2)) as HankweaveState };
      const rest = foldFrom(reloaded, steps.slice(cut));
      expect(JSON.stringify(rest.state, null, 2)).toBe(JSON.stringify(whole.state, null, 2));
      expect(rest.state).toStrictEqual(whole.state);
    }), RUNS);
  });

  it("every prefix folds without throwing and keeps the invariants", () => {
    fc.assert(fc.property(validTransitionSequence(), (steps) => {
      let f = empty();
      for (const s of steps) {
        f = foldFrom(f, [s]);
        const { state } = f;
        for (const run of state.runs) {
          expect(run.codons.filter((c) => !isTerminalCodonStatus(c.status)).length).toBeLessThanOrEqual(1);
        }
        expect(f.rs?.runCount).toBe(state.runs.length);
        expect(f.rs?.currentRunId).toBe(state.currentRunId);
        const type = s[0].type;
        if (type === "CostsIncremented" || type === "CostsUpdated" || type === "CodonFinalCostSet" || type === "RunStarted") {
          expect(f.rs?.totalCost).toBe(totalCost(state));
          expect(f.rs?.currentRunCost).toBe(currentRunCost(state));
        }
      }
    }), { numRuns: 60 });
  });

  it("the generator covers all 14 transition types and every codon target status", () => {
    const seen = new Set<string>();
    for (const steps of fc.sample(validTransitionSequence(), { numRuns: 200, seed: 42 })) {
      for (const [t] of steps) seen.add(t.type === "CodonTransitioned" ? `→${t.data.to}` : t.type);
    }
    expect([...seen].sort()).toEqual([
      "AssistantMessageCountUpdated", "CheckpointCreated", "CodonFinalCostSet", "CodonStarted", "CostsIncremented",
      "CostsUpdated", "ExtensionCountUpdated", "InitialCheckpointSet", "RunCompleted", "RunCrashed", "RunFailed",
      "RunStarted", "SentinelStatesUpdated",
      "→completed", "→completing-sentinels", "→failed", "→initializing", "→running", "→skipped", "→starting",
    ]);
  });
});

describe("the reducer never reads a clock", () => {
  afterEach(() => { vi.useRealTimers(); });

  it("folds to the same bytes whatever the wall clock says", () => {
    fc.assert(fc.property(validTransitionSequence(60), (steps) => {
      vi.useFakeTimers({ now: new Date("2001-01-01T00:00:00.000Z") });
      const a = JSON.stringify(foldFrom(empty(), steps));
      vi.setSystemTime(new Date("2099-12-31T23:59:59.999Z"));
      const b = JSON.stringify(foldFrom(empty(), steps));
      vi.useRealTimers();
      expect(b).toBe(a);
      expect(a).not.toContain("2001-01-01");
    }), { numRuns: 50 });
  });
});

describe("folding arbitrary (mostly invalid) transitions", () => {
  it("never throws, never mutates its input, and leaves the state unchanged whenever it reports a finding", () => {
    const arb = fc.tuple(validTransitionSequence(40), fc.array(anyTransition(), { maxLength: 40 }));
    fc.assert(fc.property(arb, ([valid, junk]) => {
      let state = deepFreeze(foldFrom(empty(), valid).state);
      let rs: ResultingState | null = null;
      junk.forEach((t, i) => {
        deepFreeze(t);
        const r = evolveReport(state, t, clockAt(1000 + i));
        const clearsCurrentRun = r.finding?.code === "UNKNOWN_RUN"
          && (t.type === "RunCompleted" || t.type === "RunFailed");
        if (r.finding !== null && !clearsCurrentRun) expect(r.state).toBe(state);
        if (clearsCurrentRun) expect(r.state.currentRunId).toBeNull();
        expect(JSON.stringify(r.state)).not.toContain("NaN");
        rs = nextResultingState(rs, r.state, t);
        expect(Number.isNaN(rs.totalCost)).toBe(false);
        state = deepFreeze(r.state);
      });
    }), { numRuns: 500 });
  });
});
