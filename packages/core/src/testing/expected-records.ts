/**
 * Expected-value builders matching the builders of `transitions.ts` (tests only): the run record a
 * `T.runStarted` creates and the running record `toRunning` leads to, written out field by field in
 * the runtime's key order so tests can state WHOLE records.
 */
import type { CodonExecution, HankweaveState, Run } from "../state-types.js";
import { clockAt } from "./given-then.js";
import { tokens } from "./transitions.js";

/** The run record `T.runStarted(runId)` creates at `clockAt(at)`, with `codons` and overrides appended/replaced. */
export function runRecord(runId: string, codons: unknown[], over: Partial<Run> = {}, at = 0): Run {
  return {
    runId, runFolder: `/exec/.hankweave/runs/${runId}`, gitBranch: `run-${runId}`, startingConditions: { type: "fresh" },
    codons: codons as CodonExecution[], status: "running", startTime: clockAt(at), serverPid: 4242, ...over,
  } as Run;
}

/** `{runs, currentRunId, executionPlan: []}`. */
export function stateOf(runs: Run[], currentRunId: string | null): HankweaveState {
  return { runs, currentRunId, executionPlan: [] };
}

/** The running record `toRunning(_, codonId)` produces when CodonStarted was step `startedAt`. */
export function runningRecord(codonId: string, startedAt: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    codonId, startTime: clockAt(startedAt), status: "running", claudePid: 1001, claudeLogPath: "runs/r/a-claude.log",
    claudeSessionId: "session-1", currentCost: 0, currentTokens: tokens(), assistantMessageCount: 0, extensionCount: 0,
    ...extra,
  };
}
