/**
 * The cost rule and `resultingState` (format §4.3). Sums are plain floating-point `+=` in array
 * order, so they reproduce the reference runtime's values to the last bit.
 */
import type { CodonExecution, HankweaveState, ResultingState, StateTransition } from "./state-types.js";

/**
 * The cost a codon record contributes (the runtime's `getCodonCost`): completed → `finalCost`,
 * failed → `partialCost`, running / completing-sentinels → `currentCost`, anything else (skipped,
 * preparing, starting, initializing) → 0. Sentinel cost is not included. Missing numbers count 0.
 * @example codonCost({codonId: "a", startTime: t, status: "running", currentCost: 0.5, ...}) // 0.5
 */
export function codonCost(record: CodonExecution): number {
  let v: unknown;
  switch (record.status) {
    case "completed":
      v = record.finalCost;
      break;
    case "failed":
      v = record.partialCost;
      break;
    case "running":
    case "completing-sentinels":
      v = record.currentCost;
      break;
    default:
      return 0;
  }
  return typeof v === "number" ? v : 0;
}

/**
 * The total cost of a state: one accumulator, `+=` over runs (array order, newest first) then
 * over each run's codons (array order).
 */
export function totalCost(state: HankweaveState): number {
  let total = 0;
  for (const run of state.runs) for (const codon of run.codons) total += codonCost(codon);
  return total;
}

/** The cost of the run whose id is `currentRunId` (0 when there is none). */
export function currentRunCost(state: HankweaveState): number {
  if (state.currentRunId === null) return 0;
  const run = state.runs.find((r) => r.runId === state.currentRunId);
  if (run === undefined) return 0;
  let total = 0;
  for (const codon of run.codons) total += codonCost(codon);
  return total;
}

/** Transition types after which the runtime recomputes both cost figures. */
const RECOMPUTE_TYPES: ReadonlySet<string> = new Set([
  "RunStarted", "CostsUpdated", "CostsIncremented", "CodonFinalCostSet",
]);

/**
 * The `resultingState` journaled with transition `t`, given the previous one (`null` before the
 * first transition: costs then carry as 0) and the state after applying `t`.
 *
 * Rule (format §4.3, verified on all 2,969 conformance transitions): `runCount = runs.length`,
 * `currentRunId` from the state; `totalCost` and `currentRunCost` recomputed after RunStarted,
 * CostsUpdated, CostsIncremented and CodonFinalCostSet; after RunCompleted/RunFailed
 * `currentRunCost = 0` and `totalCost` carries; after anything else both carry.
 * @example nextResultingState(null, evolve(initialState(), runStarted, at), runStarted)
 *   // {currentRunId: "r1", runCount: 1, totalCost: 0, currentRunCost: 0}
 */
export function nextResultingState(
  previous: ResultingState | null,
  stateAfter: HankweaveState,
  t: StateTransition,
): ResultingState {
  const type = (t as { type?: unknown } | null)?.type;
  let total = previous?.totalCost ?? 0;
  let current = previous?.currentRunCost ?? 0;
  if (typeof type === "string" && RECOMPUTE_TYPES.has(type)) {
    total = totalCost(stateAfter);
    current = currentRunCost(stateAfter);
  } else if (type === "RunCompleted" || type === "RunFailed") {
    current = 0;
  }
  return {
    currentRunId: stateAfter.currentRunId,
    runCount: stateAfter.runs.length,
    totalCost: total,
    currentRunCost: current,
  };
}
