/**
 * A one-glance summary of a state for people and for the main job: per run the codons by
 * outcome and the cost, plus the totals (costs by the SPEC §4.3 rule).
 */
import { totalCost, type HankweaveState } from "@hankweave-journal/core";

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
      const outcomes: Record<string, number> = Object.create(null) as Record<string, number>; // keyed by journal data
      for (const c of r.codons) outcomes[c.status] = (outcomes[c.status] ?? 0) + 1;
      return { runId: r.runId, status: r.status, codons: r.codons.length, outcomes, cost: totalCost({ ...state, runs: [r] }) };
    }),
    currentRunId: state.currentRunId,
    executionPlanEntries: state.executionPlan.length,
    totalCost: totalCost(state),
  };
}
