/**
 * The pure reducer (SPEC §4.2–4.3). OWNER: the reducer work. STUB SIGNATURES — replace bodies.
 */
import type { HankweaveState, ResultingState, StateTransition } from "./state-types.js";
import type { Finding } from "./reader-contract.js";

/** `{runs: [], currentRunId: null, executionPlan: []}`. */
export function initialState(): HankweaveState {
  return { runs: [], currentRunId: null, executionPlan: [] };
}

/** Result of applying one transition: the new state and, when it was dropped, why. */
export interface EvolveResult {
  state: HankweaveState;
  /** Non-null when the transition was invalid/under-specified/targeted nothing (state unchanged). */
  finding: Finding | null;
}

/** Apply one transition at time `at` (the journal line's timestamp). Pure. */
export function evolveReport(_state: HankweaveState, _t: StateTransition, _at: string): EvolveResult {
  throw new Error("not implemented yet");
}

/** `evolveReport(...).state`. */
export function evolve(state: HankweaveState, t: StateTransition, at: string): HankweaveState {
  return evolveReport(state, t, at).state;
}

/** `resultingState` after `t` was applied, given the previous one (null before any). SPEC §4.3. */
export function nextResultingState(
  _previous: ResultingState | null,
  _stateAfter: HankweaveState,
  _t: StateTransition,
): ResultingState {
  throw new Error("not implemented yet");
}
