/**
 * Test support: builders of StateTransitions (a local copy of the few the state tests need, so
 * they do not depend on work in progress elsewhere). Plausible defaults; never production code.
 */
import type { StateTransition } from "@hankweave-journal/core";

type Tokens = { inputTokens: number; outputTokens: number; cacheCreationTokens: number; cacheReadTokens: number };
type Meta = Record<string, unknown>;

/** A TokenUsage with the given counts (missing ones 0). */
export function tokens(p: Partial<Tokens> = {}): Tokens {
  return { inputTokens: p.inputTokens ?? 0, outputTokens: p.outputTokens ?? 0, cacheCreationTokens: p.cacheCreationTokens ?? 0, cacheReadTokens: p.cacheReadTokens ?? 0 };
}

const tr = (type: string, data: Record<string, unknown>): StateTransition => ({ type, data }) as unknown as StateTransition;

export const T = {
  runStarted: (runId: string, p: { serverPid?: number } = {}): StateTransition =>
    tr("RunStarted", { runId, runFolder: `/exec/.hankweave/runs/${runId}`, gitBranch: `run-${runId}`, startingConditions: { type: "fresh" }, serverPid: p.serverPid ?? 4242 }),
  runCompleted: (runId: string) => tr("RunCompleted", { runId }),
  runFailed: (runId: string) => tr("RunFailed", { runId }),
  codonStarted: (runId: string, codonId: string) => tr("CodonStarted", { runId, codonId }),
  codonTransitioned: (runId: string, codonId: string, from: string, to: string, metadata: Meta = {}) =>
    tr("CodonTransitioned", { runId, codonId, from, to, metadata }),
  costsUpdated: (runId: string, codonId: string, cost: number, t: Tokens = tokens()) => tr("CostsUpdated", { runId, codonId, cost, tokens: t }),
  costsIncremented: (runId: string, codonId: string, costDelta: number, t: Tokens = tokens()) =>
    tr("CostsIncremented", { runId, codonId, costDelta, tokensDelta: t }),
  codonFinalCostSet: (runId: string, codonId: string, finalCost: number, t: Tokens = tokens()) =>
    tr("CodonFinalCostSet", { runId, codonId, finalCost, finalTokens: t }),
  assistantMessageCountUpdated: (runId: string, codonId: string, newCount: number) => tr("AssistantMessageCountUpdated", { runId, codonId, newCount }),
  extensionCountUpdated: (runId: string, codonId: string, extensionCount: number) => tr("ExtensionCountUpdated", { runId, codonId, extensionCount }),
  checkpointCreated: (runId: string, codonId: string, checkpointType: string, sha: string) =>
    tr("CheckpointCreated", { runId, codonId, checkpointType, sha, branch: `run-${runId}` }),
  initialCheckpointSet: (sha: string) => tr("InitialCheckpointSet", { sha }),
};

/** The metadata each forward target needs. */
export const META = {
  initializing: (pid = 1001, log = "runs/r/a-claude.log"): Meta => ({ claudePid: pid, claudeLogPath: log }),
  running: (session = "session-1"): Meta => ({ claudeSessionId: session }),
  completed: (sha = "c0ffee"): Meta => ({ exitCode: 0, resultMessageReceived: true, checkpointSha: sha, contextExceeded: false, extensionCount: 0 }),
  failed: (during: string): Meta => ({ exitCode: 1, failureReason: { type: "api-error", retriable: true, message: "boom" }, failedDuring: during }),
  skipped: (during: string): Meta => ({ skippedDuring: during }),
};
