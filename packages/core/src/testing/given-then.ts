/**
 * `given(transitions).when(t).then(state)`: the reducer's specification helper (after emmett's
 * `DeciderSpecification`). Test-only: reachable through `@hankweave-journal/core/testing`, never
 * from the production entry point.
 *
 * Guarantees: every state and transition handed to the reducer is deep-frozen first, so a reducer
 * that mutates its inputs fails the spec with a TypeError; `then` compares the WHOLE state,
 * including key order (it compares `JSON.stringify(state, null, 2)`, the bytes of state.json) and
 * rejects `undefined`-valued keys. Assertion failures throw an Error carrying `expected`/`actual`
 * (vitest shows the diff). Does not depend on vitest.
 *
 * @example
 *   given([runStarted, codonStarted]).when(toStarting).then(expectedState);
 *   given([runStarted]).when(badEdge).thenDropped("INVALID_TRANSITION");
 */
import { evolveReport, initialState, nextResultingState } from "../reducer.js";
import type { Finding } from "../reader-contract.js";
import type { HankweaveState, ResultingState, StateTransition } from "../state-types.js";

/** A transition with its journal time, or a bare transition (timed by `clockAt(position)`). */
export type GivenStep = StateTransition | readonly [StateTransition, string];

/** The deterministic clock of bare steps: step i happens at 2026-01-01T00:00:00.000Z + i seconds. */
export function clockAt(i: number): string {
  return new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + i * 1000).toISOString();
}

/** Recursively freeze a JSON-like value (returns it). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

function fail(message: string, expected: unknown, actual: unknown): never {
  const err = new Error(message) as Error & { expected: unknown; actual: unknown; showDiff: boolean };
  err.expected = expected;
  err.actual = actual;
  err.showDiff = true;
  throw err;
}

/** Paths of keys whose value is `undefined` (a state must have none). */
function undefinedKeys(value: unknown, at = "$"): string[] {
  if (typeof value !== "object" || value === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) out.push(`${at}.${k}`);
    else out.push(...undefinedKeys(v, `${at}.${k}`));
  }
  return out;
}

/** The outcome of folding the given and when steps. */
export interface FoldOutcome {
  /** State before the last `when` step (after all `given` and earlier `when` steps). */
  before: HankweaveState;
  state: HankweaveState;
  /** Finding of the last `when` step (null if it applied or if there is no when step). */
  finding: Finding | null;
  /** Findings of every step, in order (null where the step applied). */
  findings: (Finding | null)[];
  /** The resultingState chain (one per step). */
  resultingStates: ResultingState[];
}

/** A specification under construction. */
export interface Spec {
  /** Add the steps under test (their findings are what `thenDropped`/`thenFinding` look at). */
  when(...steps: GivenStep[]): Spec;
  /** Fold and return everything (for custom assertions). */
  fold(): FoldOutcome;
  /** Assert the folded state equals `expected` exactly (fields, key order, no undefined keys) and that every when step applied. */
  then(expected: HankweaveState): FoldOutcome;
  /** Assert the last when step was dropped with `code`: the state is the SAME object as before it. */
  thenDropped(code: string): FoldOutcome;
  /** Assert the last when step produced a finding with `code` and the state equals `expected`. */
  thenFinding(code: string, expected: HankweaveState): FoldOutcome;
}

function timed(step: GivenStep, i: number): readonly [StateTransition, string] {
  return Array.isArray(step) ? (step as readonly [StateTransition, string]) : [step as StateTransition, clockAt(i)];
}

/**
 * Start a specification from `steps` folded onto `initial` (default `initialState()`).
 * Bare steps are timed `clockAt(i)` where i counts all steps (given then when) from 0.
 */
export function given(steps: readonly GivenStep[], initial: HankweaveState = initialState()): Spec {
  const givenSteps = steps.slice();
  const whenSteps: GivenStep[] = [];
  const spec: Spec = {
    when(...more) {
      whenSteps.push(...more);
      return spec;
    },
    fold() {
      let state = deepFreeze(structuredClone(initial));
      let before = state;
      let previous: ResultingState | null = null;
      const findings: (Finding | null)[] = [];
      const resultingStates: ResultingState[] = [];
      const all = [...givenSteps, ...whenSteps];
      all.forEach((step, i) => {
        const [t, at] = timed(step, i);
        deepFreeze(t);
        before = state;
        const r = evolveReport(state, t, at);
        state = deepFreeze(r.state);
        findings.push(r.finding);
        previous = nextResultingState(previous, state, t);
        resultingStates.push(previous);
      });
      const finding = whenSteps.length > 0 ? findings[findings.length - 1] : null;
      return { before, state, finding, findings, resultingStates };
    },
    then(expected) {
      const out = spec.fold();
      const whenFindings = out.findings.slice(givenSteps.length).filter((f) => f !== null);
      if (whenFindings.length > 0) fail(`a when step did not apply: ${whenFindings[0]?.code}`, null, whenFindings);
      assertState(out.state, expected);
      return out;
    },
    thenDropped(code) {
      const out = spec.fold();
      if (whenSteps.length === 0) throw new TypeError("thenDropped needs a when step");
      if (out.finding?.code !== code) fail(`expected finding ${code}`, code, out.finding);
      if (out.state !== out.before) fail(`a dropped transition must return the same state object`, out.before, out.state);
      return out;
    },
    thenFinding(code, expected) {
      const out = spec.fold();
      if (out.finding?.code !== code) fail(`expected finding ${code}`, code, out.finding);
      assertState(out.state, expected);
      return out;
    },
  };
  return spec;
}

/**
 * Assert `actual` equals `expected` as state.json would show it: same `JSON.stringify(_, null, 2)`
 * (so same fields, values and key order), and no `undefined`-valued key in `actual`.
 */
export function assertState(actual: unknown, expected: unknown): void {
  const bad = undefinedKeys(actual);
  if (bad.length > 0) fail(`state holds undefined-valued keys: ${bad.join(", ")}`, [], bad);
  const a = JSON.stringify(actual, null, 2);
  const e = JSON.stringify(expected, null, 2);
  if (a !== e) fail("state differs from the expected one (fields, values or key order)", e, a);
}
