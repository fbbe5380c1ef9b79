/**
 * Builders of codon records (format §4.2 items 3 and 5). Each returns a NEW object whose key order is
 * the reference runtime's: "previous + x" spreads the previous record (existing keys keep their
 * position, new keys go to the end); "fresh" records are built in the listed order. Keys whose
 * value would be `undefined` are left out, so a state never holds `undefined`-valued keys and
 * `JSON.parse(JSON.stringify(state))` equals it (field by field and in key order).
 */
import type {
  CodonExecution, CodonStatus, ExecutedSentinels, FailureReason, TokenUsage,
} from "./state-types.js";

/** A codon record viewed as a plain object (reducer-internal). */
export type CodonRecord = Record<string, unknown>;

/** A fresh all-zero TokenUsage. */
export function zeroTokens(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 };
}

/** The failure reason the runtime stores for a crashed run's in-flight codon. */
export function serverCrashedReason(): FailureReason {
  return { type: "unknown", retriable: false, message: "Server crashed" };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Copy `value` to a fresh object with the same key order (for objects; other values as is). */
function copy(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice();
  return isObject(value) ? { ...value } : value;
}

/** Set `obj[key] = value` unless value is undefined (undefined keys vanish). */
function put(obj: CodonRecord, key: string, value: unknown): void {
  if (value !== undefined) obj[key] = value;
}

/** Copy each key of `from` whose value is truthy (the runtime's `...(x && {x})`). */
function copyTruthy(to: CodonRecord, from: CodonRecord, keys: readonly string[]): void {
  for (const k of keys) if (from[k]) to[k] = from[k];
}

/** `{loaded, totalCost}` → `{executed, totalCost}`; an already renamed value is kept. */
export function renameSentinels(s: unknown): ExecutedSentinels | unknown {
  if (!isObject(s) || !Object.hasOwn(s, "loaded")) return s;
  return { executed: s.loaded, totalCost: s.totalCost };
}

function asRecord(r: CodonRecord): CodonExecution {
  return r as unknown as CodonExecution;
}

const PROCESS_COPIES = ["rigSetupCheckpoint", "claudePid", "claudeSessionId", "claudeLogPath", "previousSessionId", "loopContext"];

/** `currentCost ?? 0` and `currentTokens ?? zeros` of a record, copied. */
function partials(prev: CodonRecord): { cost: unknown; tokens: unknown } {
  return { cost: prev.currentCost ?? 0, tokens: copy(prev.currentTokens ?? zeroTokens()) };
}

/**
 * The record that replaces `prev` after a valid `CodonTransitioned` to `to` at time `at`
 * (metadata already checked by the guards).
 */
export function transitionedRecord(prev: CodonRecord, to: CodonStatus, m: CodonRecord, at: string): CodonExecution {
  switch (to) {
    case "starting": {
      const r: CodonRecord = { codonId: prev.codonId, startTime: prev.startTime, status: "starting" };
      put(r, "rigSetupCheckpoint", m.checkpointSha);
      put(r, "loopContext", copy(prev.loopContext));
      return asRecord(r);
    }
    case "initializing": {
      const r: CodonRecord = { ...prev, status: "initializing" };
      put(r, "claudePid", m.claudePid || prev.claudePid);
      put(r, "claudeLogPath", m.claudeLogPath || prev.claudeLogPath);
      put(r, "previousSessionId", m.previousSessionId || prev.previousSessionId);
      return asRecord(r);
    }
    case "running": {
      const r: CodonRecord = { ...prev, status: "running" };
      put(r, "claudeSessionId", m.claudeSessionId);
      r.currentCost = 0;
      r.currentTokens = zeroTokens();
      r.assistantMessageCount = 0;
      r.extensionCount = 0;
      return asRecord(r);
    }
    case "completing-sentinels":
      return asRecord({ ...prev, status: "completing-sentinels" });
    case "completed": {
      const p = partials(prev);
      const r: CodonRecord = { ...prev, status: "completed" };
      r.endTime = at;
      r.exitCode = 0;
      r.finalCost = p.cost;
      r.finalTokens = p.tokens;
      r.resultMessageReceived = m.resultMessageReceived || false;
      r.completionCheckpoint = m.checkpointSha;
      if (prev.sentinels !== undefined) r.sentinels = renameSentinels(prev.sentinels);
      if (m.budgetExceeded) r.budgetExceeded = copy(m.budgetExceeded);
      return asRecord(r);
    }
    case "failed": {
      const p = partials(prev);
      const r: CodonRecord = {
        codonId: prev.codonId, startTime: prev.startTime, status: "failed", endTime: at,
        failedDuring: m.failedDuring, exitCode: m.exitCode, failureReason: copy(m.failureReason),
        partialCost: p.cost, partialTokens: p.tokens,
      };
      if ((prev.status === "running" || prev.status === "completing-sentinels") && prev.sentinels) {
        r.sentinels = renameSentinels(prev.sentinels);
      }
      copyTruthy(r, prev, PROCESS_COPIES);
      if (prev.extensionCount !== undefined) r.extensionCount = prev.extensionCount;
      if (m.checkpointSha) r.errorCheckpoint = m.checkpointSha;
      return asRecord(r);
    }
    case "skipped": {
      const p = partials(prev);
      const r: CodonRecord = {
        codonId: prev.codonId, startTime: prev.startTime, status: "skipped", endTime: at,
        skippedDuring: m.skippedDuring, partialCost: p.cost, partialTokens: p.tokens,
      };
      if ((prev.status === "running" || prev.status === "completing-sentinels") && prev.sentinels) {
        r.sentinels = renameSentinels(prev.sentinels);
      }
      copyTruthy(r, prev, PROCESS_COPIES);
      if (prev.assistantMessageCount !== undefined) r.assistantMessageCount = prev.assistantMessageCount;
      if (m.checkpointSha) r.skipCheckpoint = m.checkpointSha;
      return asRecord(r);
    }
    case "preparing":
      // Not a target of any edge; the caller never gets here (the map rejects it first).
      return asRecord({ ...prev });
  }
}

/** The failed record a RunCrashed makes of the run's first non-terminal record. */
export function crashedRecord(prev: CodonRecord, detectedAt: unknown): CodonExecution {
  const p = partials(prev);
  const r: CodonRecord = {
    codonId: prev.codonId, startTime: prev.startTime, status: "failed",
  };
  put(r, "endTime", detectedAt);
  r.failedDuring = prev.status;
  r.exitCode = -1;
  r.failureReason = serverCrashedReason();
  r.partialCost = p.cost;
  r.partialTokens = p.tokens;
  if (prev.status === "running" && prev.sentinels) r.sentinels = renameSentinels(prev.sentinels);
  copyTruthy(r, prev, PROCESS_COPIES);
  return asRecord(r);
}

/** The preparing record a CodonStarted appends. */
export function startedRecord(codonId: string, at: string, loopContext: unknown): CodonExecution {
  const r: CodonRecord = { codonId, startTime: at, status: "preparing" };
  if (loopContext) r.loopContext = copy(loopContext);
  return asRecord(r);
}
