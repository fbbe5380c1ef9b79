/**
 * Builders of the 14 StateTransition types with plausible defaults, for tests (never for
 * production code). Every builder returns a new object; pass overrides for what matters.
 * @example T.codonTransitioned("r1", "a", "starting", "initializing", {claudePid: 7, claudeLogPath: "a.log"})
 */
import type {
  CheckpointType, CodonStatus, LoopContext, SentinelState, StartingConditions, StateTransition, TokenUsage,
  TransitionMetadata,
} from "../state-types.js";

/** A TokenUsage with the given counts (missing ones 0). */
export function tokens(p: Partial<TokenUsage> = {}): TokenUsage {
  return {
    inputTokens: p.inputTokens ?? 0,
    outputTokens: p.outputTokens ?? 0,
    cacheCreationTokens: p.cacheCreationTokens ?? 0,
    cacheReadTokens: p.cacheReadTokens ?? 0,
  };
}

/** An active sentinel state. */
export function sentinel(id: string, p: Partial<SentinelState> = {}): SentinelState {
  return {
    id, model: "anthropic/claude-haiku-4-5", loadedAt: "2026-01-01T00:00:00.500Z", llmCallCount: 0,
    failedLLMCalls: 0, totalTriggers: 0, totalCost: 0, status: "active", ...p,
  };
}

export const T = {
  runStarted(runId: string, p: { startingConditions?: StartingConditions; serverPid?: number } = {}): StateTransition {
    return {
      type: "RunStarted",
      data: {
        runId, runFolder: `/exec/.hankweave/runs/${runId}`, gitBranch: `run-${runId}`,
        startingConditions: p.startingConditions ?? { type: "fresh" }, serverPid: p.serverPid ?? 4242,
      },
    };
  },
  runCompleted: (runId: string): StateTransition => ({ type: "RunCompleted", data: { runId } }),
  runFailed: (runId: string): StateTransition => ({ type: "RunFailed", data: { runId } }),
  runCrashed: (runId: string, detectedAt: string, lastCodonStatus: CodonStatus = "running"): StateTransition => ({
    type: "RunCrashed", data: { runId, detectedAt, lastCodonStatus },
  }),
  codonStarted(runId: string, codonId: string, loopContext?: LoopContext): StateTransition {
    return { type: "CodonStarted", data: loopContext ? { runId, codonId, loopContext } : { runId, codonId } };
  },
  codonTransitioned(runId: string, codonId: string, from: CodonStatus, to: CodonStatus, metadata: TransitionMetadata = {}): StateTransition {
    return { type: "CodonTransitioned", data: { runId, codonId, from, to, metadata } };
  },
  costsUpdated: (runId: string, codonId: string, cost: number, t: TokenUsage = tokens()): StateTransition => ({
    type: "CostsUpdated", data: { runId, codonId, cost, tokens: t },
  }),
  costsIncremented: (runId: string, codonId: string, costDelta: number, t: TokenUsage = tokens()): StateTransition => ({
    type: "CostsIncremented", data: { runId, codonId, costDelta, tokensDelta: t },
  }),
  codonFinalCostSet: (runId: string, codonId: string, finalCost: number, t: TokenUsage = tokens()): StateTransition => ({
    type: "CodonFinalCostSet", data: { runId, codonId, finalCost, finalTokens: t },
  }),
  assistantMessageCountUpdated: (runId: string, codonId: string, newCount: number): StateTransition => ({
    type: "AssistantMessageCountUpdated", data: { runId, codonId, newCount },
  }),
  extensionCountUpdated: (runId: string, codonId: string, extensionCount: number): StateTransition => ({
    type: "ExtensionCountUpdated", data: { runId, codonId, extensionCount },
  }),
  checkpointCreated: (runId: string, codonId: string, checkpointType: CheckpointType, sha: string): StateTransition => ({
    type: "CheckpointCreated", data: { runId, codonId, checkpointType, sha, branch: `run-${runId}` },
  }),
  initialCheckpointSet: (sha: string): StateTransition => ({ type: "InitialCheckpointSet", data: { sha } }),
  sentinelStatesUpdated: (runId: string, codonId: string, sentinelStates: SentinelState[], totalCost: number): StateTransition => ({
    type: "SentinelStatesUpdated", data: { runId, codonId, sentinelStates, totalCost },
  }),
};

/** The metadata each forward target needs, with sample values. */
export const META = {
  initializing: (pid = 1001, log = "runs/r/a-claude.log"): TransitionMetadata => ({ claudePid: pid, claudeLogPath: log }),
  running: (session = "session-1"): TransitionMetadata => ({ claudeSessionId: session }),
  completed: (sha = "c0ffee", extra: TransitionMetadata = {}): TransitionMetadata => ({
    exitCode: 0, resultMessageReceived: true, checkpointSha: sha, contextExceeded: false, extensionCount: 0, ...extra,
  }),
  failed: (during: CodonStatus, extra: TransitionMetadata = {}): TransitionMetadata => ({
    exitCode: 1, failureReason: { type: "api-error", retriable: true, message: "boom" }, failedDuring: during, ...extra,
  }),
  skipped: (during: CodonStatus, extra: TransitionMetadata = {}): TransitionMetadata => ({ skippedDuring: during, ...extra }),
};

/**
 * The transitions that walk codon `codonId` from CodonStarted to `running` (metadata included).
 * @example given([T.runStarted("r"), ...toRunning("r", "a")])
 */
export function toRunning(runId: string, codonId: string, loopContext?: LoopContext): StateTransition[] {
  return [
    T.codonStarted(runId, codonId, loopContext),
    T.codonTransitioned(runId, codonId, "preparing", "starting"),
    T.codonTransitioned(runId, codonId, "starting", "initializing", META.initializing()),
    T.codonTransitioned(runId, codonId, "initializing", "running", META.running()),
  ];
}
