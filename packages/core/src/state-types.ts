/**
 * The `state.json` types (seeds/000, format §4.1) and the 14 StateTransition types (seeds/001).
 *
 * These are TypeScript views of what the reducer produces and of what the reference runtime
 * writes; the runtime-checked versions are the zod schemas in `schemas/state-schemas.ts`.
 * Optional fields are absent (never `undefined`-valued) in states built by the reducer.
 */

/** Token counters, keys in this order. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheCreationTokens: number;
  cacheReadTokens: number;
}

/** The eight codon statuses. */
export type CodonStatus =
  | "preparing" | "starting" | "initializing" | "running" | "completing-sentinels"
  | "completed" | "failed" | "skipped";

/** The three terminal codon statuses. */
export type TerminalCodonStatus = "completed" | "failed" | "skipped";

/** The four run statuses. */
export type RunStatus = "running" | "completed" | "failed" | "crashed";

/** Where a codon sits inside a loop expansion. */
export interface LoopContext { loopId: string; iteration: number; codonIndexInLoop: number }

/** One sentinel's counters (seeds/000 § Track sentinel state). */
export interface SentinelState {
  id: string;
  model: string;
  loadedAt: string;
  unloadedAt?: string;
  llmCallCount: number;
  failedLLMCalls: number;
  lastLlmCallAt?: string;
  totalTriggers: number;
  totalCost: number;
  status: "active" | "unloaded";
  unloadReason?: "codon-complete" | "fatal-error" | "consecutive-failures";
}

/** Sentinels of a non-terminal record. */
export interface LoadedSentinels { loaded: SentinelState[]; totalCost: number }
/** Sentinels of a terminal record (`loaded` renamed to `executed`). */
export interface ExecutedSentinels { executed: SentinelState[]; totalCost: number }

/** `{currency, limit, used}` on a codon force-completed (or failed) at a budget cap. */
export interface BudgetExceeded { currency: string; limit: number; used: number }

/** Why a codon failed. */
export interface FailureReason {
  type: "timeout" | "rate-limit" | "api-error" | "sentinel-load-failure" | "unknown";
  retriable: boolean;
  message?: string;
  sentinelRefs?: string[];
  retryAfterMs?: number;
}

interface BaseCodon {
  codonId: string;
  startTime: string;
  loopContext?: LoopContext;
}

/** Rig setup running. */
export interface PreparingCodon extends BaseCodon { status: "preparing"; rigSetupCheckpoint?: string }

/** Spawning the agent process. */
export interface StartingCodon extends BaseCodon {
  status: "starting";
  rigSetupCheckpoint?: string;
  sentinels?: LoadedSentinels;
}

/** Process started, waiting for a session id. */
export interface InitializingCodon extends BaseCodon {
  status: "initializing";
  rigSetupCheckpoint?: string;
  claudePid: number;
  claudeLogPath: string;
  previousSessionId?: string;
  sentinels?: LoadedSentinels;
}

/** The agent is working. */
export interface RunningCodon extends BaseCodon {
  status: "running";
  rigSetupCheckpoint?: string;
  claudePid: number;
  claudeLogPath: string;
  previousSessionId?: string;
  claudeSessionId: string;
  currentCost: number;
  currentTokens: TokenUsage;
  assistantMessageCount: number;
  extensionCount: number;
  sentinels?: LoadedSentinels;
}

/** The agent finished; sentinel queues drain. Same fields as running. */
export interface CompletingSentinelsCodon extends Omit<RunningCodon, "status"> {
  status: "completing-sentinels";
}

/** Terminal success. Carries the running fields it came from plus the final ones. */
export interface CompletedCodon extends BaseCodon {
  status: "completed";
  rigSetupCheckpoint?: string;
  claudePid?: number;
  claudeLogPath?: string;
  previousSessionId?: string;
  claudeSessionId?: string;
  currentCost?: number;
  currentTokens?: TokenUsage;
  assistantMessageCount?: number;
  extensionCount?: number;
  endTime: string;
  exitCode: 0;
  finalCost: number;
  finalTokens: TokenUsage;
  resultMessageReceived: boolean;
  completionCheckpoint: string;
  sentinels?: ExecutedSentinels;
  budgetExceeded?: BudgetExceeded;
}

/** Terminal failure. */
export interface FailedCodon extends BaseCodon {
  status: "failed";
  endTime: string;
  failedDuring: CodonStatus;
  exitCode: number;
  failureReason: FailureReason;
  partialCost: number;
  partialTokens: TokenUsage;
  sentinels?: ExecutedSentinels;
  rigSetupCheckpoint?: string;
  claudePid?: number;
  claudeSessionId?: string;
  claudeLogPath?: string;
  previousSessionId?: string;
  extensionCount?: number;
  errorCheckpoint?: string;
}

/** Terminal skip by the user. */
export interface SkippedCodon extends BaseCodon {
  status: "skipped";
  endTime: string;
  skippedDuring: CodonStatus;
  partialCost: number;
  partialTokens: TokenUsage;
  sentinels?: ExecutedSentinels;
  rigSetupCheckpoint?: string;
  claudePid?: number;
  claudeSessionId?: string;
  claudeLogPath?: string;
  previousSessionId?: string;
  assistantMessageCount?: number;
  skipCheckpoint?: string;
}

/** A codon record: the discriminated union of the eight status variants. */
export type CodonExecution =
  | PreparingCodon | StartingCodon | InitializingCodon | RunningCodon | CompletingSentinelsCodon
  | CompletedCodon | FailedCodon | SkippedCodon;

/** How a run started. */
export type StartingConditions =
  | { type: "fresh"; initialCheckpointSha?: string }
  | {
      type: "continuation";
      source: { runId: string; afterCodon: string | null; checkpointSha: string };
      reason?: "retry" | "rollback" | "continue";
    };

/** One server lifecycle; key order as the runtime writes it. */
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

/** One entry of the flattened execution plan (the codon config is kept opaque). */
export interface ExecutionCodonEntry {
  codon: Record<string, unknown>;
  codonId: string;
  loopContext?: LoopContext & { loopBudget?: Record<string, unknown> };
  [key: string]: unknown;
}

/** The whole `state.json`: `{runs (newest first), currentRunId, executionPlan, initialCheckpoint?}`. */
export interface HankweaveState {
  runs: Run[];
  currentRunId: string | null;
  executionPlan: ExecutionCodonEntry[];
  initialCheckpoint?: string;
}

/** `CodonTransitioned.metadata`: every key optional; the guards in transition-map.ts require some. */
export interface TransitionMetadata {
  claudePid?: number;
  claudeLogPath?: string;
  previousSessionId?: string;
  claudeSessionId?: string;
  exitCode?: number;
  failureReason?: FailureReason;
  failedDuring?: CodonStatus;
  skippedDuring?: CodonStatus;
  resultMessageReceived?: boolean;
  sentinelCount?: number;
  sentinelIds?: string[];
  checkpointSha?: string;
  checkpointBranch?: string;
  contextExceeded?: boolean;
  extensionCount?: number;
  budgetExceeded?: BudgetExceeded;
  [key: string]: unknown;
}

/** The kinds of checkpoint a `CheckpointCreated` back-patches. */
export type CheckpointType = "rig-setup" | "completed" | "error" | "skipped";

export interface RunStartedTransition {
  type: "RunStarted";
  data: { runId: string; runFolder: string; gitBranch: string; startingConditions: StartingConditions; serverPid: number };
}
export interface RunCompletedTransition { type: "RunCompleted"; data: { runId: string } }
export interface RunFailedTransition { type: "RunFailed"; data: { runId: string } }
export interface RunCrashedTransition {
  type: "RunCrashed";
  data: { runId: string; detectedAt: string; lastCodonStatus: CodonStatus };
}
export interface CodonStartedTransition {
  type: "CodonStarted";
  data: { runId: string; codonId: string; loopContext?: LoopContext };
}
export interface CodonTransitionedTransition {
  type: "CodonTransitioned";
  data: { runId: string; codonId: string; from: CodonStatus; to: CodonStatus; metadata?: TransitionMetadata };
}
export interface CostsUpdatedTransition {
  type: "CostsUpdated";
  data: { runId: string; codonId: string; cost: number; tokens: TokenUsage };
}
export interface CostsIncrementedTransition {
  type: "CostsIncremented";
  data: { runId: string; codonId: string; costDelta: number; tokensDelta: TokenUsage };
}
export interface AssistantMessageCountUpdatedTransition {
  type: "AssistantMessageCountUpdated";
  data: { runId: string; codonId: string; newCount: number };
}
export interface ExtensionCountUpdatedTransition {
  type: "ExtensionCountUpdated";
  data: { runId: string; codonId: string; extensionCount: number };
}
export interface CheckpointCreatedTransition {
  type: "CheckpointCreated";
  data: { runId: string; codonId: string; checkpointType: CheckpointType; sha: string; branch: string };
}
export interface InitialCheckpointSetTransition { type: "InitialCheckpointSet"; data: { sha: string } }
export interface CodonFinalCostSetTransition {
  type: "CodonFinalCostSet";
  data: { runId: string; codonId: string; finalCost: number; finalTokens: TokenUsage };
}
export interface SentinelStatesUpdatedTransition {
  type: "SentinelStatesUpdated";
  data: { runId: string; codonId: string; sentinelStates: SentinelState[]; totalCost: number };
}

/** A StateTransition `{type, data}`: the discriminated union of the 14 types (seeds/001). */
export type StateTransition =
  | RunStartedTransition | RunCompletedTransition | RunFailedTransition | RunCrashedTransition
  | CodonStartedTransition | CodonTransitionedTransition | CostsUpdatedTransition | CostsIncrementedTransition
  | AssistantMessageCountUpdatedTransition | ExtensionCountUpdatedTransition | CheckpointCreatedTransition
  | InitialCheckpointSetTransition | CodonFinalCostSetTransition | SentinelStatesUpdatedTransition;

/** The 14 transition type names. */
export type StateTransitionType = StateTransition["type"];

/** `state.transition` `data.resultingState` (format §4.3). */
export interface ResultingState {
  currentRunId: string | null;
  runCount: number;
  totalCost: number;
  currentRunCost: number;
}

/** `state.transition` `data` (format §2.3). */
export interface StateTransitionEventData {
  transitionType: StateTransitionType;
  runId?: string;
  codonId?: string;
  transition: StateTransition;
  resultingState: ResultingState;
}
