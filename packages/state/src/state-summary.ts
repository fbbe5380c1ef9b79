/**
 * A one-glance summary of a state for people and for the main job: per run the codons by
 * outcome (core's `outcomeOf`, as audit, summary and report count them) and the cost, plus the totals (costs by the format §4.3 rule).
 */
import { OUTCOME_ORDER, outcomeOf, totalCost, type HankweaveState } from "@hankweave-journal/core";

/** Summary of a state. */
export interface StateSummary {
  runs: { runId: string; status: string; codons: number; outcomes: Record<string, number>; cost: number }[];
  currentRunId: string | null;
  executionPlanEntries: number;
  totalCost: number;
}

/**
 * Summarize a state. Pure.
 * @example summarizeState(fold.state).runs[0].outcomes // { completed: 17 }
 */
export function summarizeState(state: HankweaveState): StateSummary {
  return {
    runs: state.runs.map((r) => {
      // Outcomes by the one rule (a RunCrashed record is "crashed", not "failed"), non-zero ones in OUTCOME_ORDER.
      const counts = new Map<string, number>();
      for (const c of r.codons) {
        const o = outcomeOf(c);
        counts.set(o, (counts.get(o) ?? 0) + 1);
      }
      const outcomes: Record<string, number> = Object.create(null) as Record<string, number>;
      for (const o of OUTCOME_ORDER) if (counts.has(o)) outcomes[o] = counts.get(o)!;
      return { runId: r.runId, status: r.status, codons: r.codons.length, outcomes, cost: totalCost({ ...state, runs: [r] }) };
    }),
    currentRunId: state.currentRunId,
    executionPlanEntries: state.executionPlan.length,
    totalCost: totalCost(state),
  };
}
