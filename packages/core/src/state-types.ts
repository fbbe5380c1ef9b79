/**
 * The `state.json` types (seeds/000, SPEC §4.1). OWNER: the reducer work (refine freely, keep names).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
}

export type CodonStatus =
  | "preparing" | "starting" | "initializing" | "running" | "completing-sentinels"
  | "completed" | "failed" | "skipped";

export type RunStatus = "running" | "completed" | "failed" | "crashed";

export interface LoopContext { loopId: string; iteration: number; codonIndexInLoop: number }

/** A codon record (one of eight status variants); refined by the reducer work. */
export interface CodonExecution {
  codonId: string;
  startTime: string;
  status: CodonStatus;
  loopContext?: LoopContext;
  [key: string]: unknown;
}

export type StartingConditions =
  | { type: "fresh"; initialCheckpointSha?: string }
  | {
      type: "continuation";
      source: { runId: string; afterCodon: string | null; checkpointSha: string };
      reason?: "retry" | "rollback" | "continue";
    };

export interface Run {
  runId: string;
  runFolder: string;
  gitBranch: string;
  startingConditions: StartingConditions;
  codons: CodonExecution[];
  status: RunStatus;
  startTime: string;
  serverPid: number;
  endTime?: string;
}

export interface HankweaveState {
  runs: Run[];
  currentRunId: string | null;
  executionPlan: unknown[];
  initialCheckpoint?: string;
}

/** A StateTransition object `{type, data}` (14 types, seeds/001). */
export interface StateTransition {
  type: string;
  data: Record<string, unknown>;
}

/** `state.transition` `data.resultingState` (SPEC §4.3). */
export interface ResultingState {
  currentRunId: string | null;
  runCount: number;
  totalCost: number;
  currentRunCost: number;
}
