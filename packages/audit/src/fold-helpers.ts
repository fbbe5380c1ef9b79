/**
 * Small pure helpers of the audit fold: envelope checks of a `state.transition`, the
 * resultingState comparison, and cost/token sums over codon records (SPEC §4.3).
 */
import { codonCost, type CodonExecution, type ResultingState, type Run, type TokenUsage } from "@hankweave-journal/core";

const TERMINAL = new Set(["completed", "failed", "skipped"]);

/** True for `completed`, `failed` and `skipped`. */
export function isTerminalStatus(status: unknown): boolean {
  return typeof status === "string" && TERMINAL.has(status);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What is wrong with a `state.transition` payload; `applicable` when the transition can still be applied. */
export interface TransitionProblem {
  message: string;
  details: Record<string, unknown>;
  applicable: boolean;
}

/** Null when `data` is a well-formed `state.transition` payload (SPEC §2.3). */
export function transitionProblem(data: unknown): TransitionProblem | null {
  if (!isObject(data)) return { message: "state.transition data is not an object", details: {}, applicable: false };
  const t = data.transition;
  if (!isObject(t) || typeof t.type !== "string" || !isObject(t.data)) {
    return { message: "state.transition lacks transition {type, data}", details: {}, applicable: false };
  }
  if (data.transitionType !== t.type) {
    return { message: `transitionType ${JSON.stringify(data.transitionType)} differs from transition.type ${JSON.stringify(t.type)}`, details: { expected: t.type, actual: data.transitionType }, applicable: true };
  }
  for (const key of ["runId", "codonId"] as const) {
    if (key in data && data[key] !== t.data[key]) {
      return { message: `${key} ${JSON.stringify(data[key])} differs from transition.data.${key} ${JSON.stringify(t.data[key])}`, details: { field: key, expected: t.data[key], actual: data[key] }, applicable: true };
    }
  }
  return null;
}

/** One field of a resultingState that differs. `delta` = journaled − recomputed (numbers only). */
export interface ResultingStateDiff {
  field: keyof ResultingState;
  journaled: unknown;
  recomputed: unknown;
  delta: number | null;
}

const RS_FIELDS: (keyof ResultingState)[] = ["currentRunId", "runCount", "totalCost", "currentRunCost"];

/** Field-by-field exact comparison (numbers to the last bit). */
export function compareResultingState(journaled: Record<string, unknown> | ResultingState, recomputed: ResultingState): ResultingStateDiff[] {
  const diffs: ResultingStateDiff[] = [];
  const j = journaled as Record<string, unknown>;
  for (const field of RS_FIELDS) {
    const a = j[field];
    const b = recomputed[field];
    if (a === b) continue;
    const delta = typeof a === "number" && typeof b === "number" ? a - b : null;
    diffs.push({ field, journaled: a === undefined ? null : a, recomputed: b, delta });
  }
  return diffs;
}

/** The latest record with `codonId` in a run, or undefined. */
export function latestRecord(run: Run, codonId: string): CodonExecution | undefined {
  for (let i = run.codons.length - 1; i >= 0; i--) if (run.codons[i].codonId === codonId) return run.codons[i];
  return undefined;
}

/** The cost a record contributes (0 when absent). */
export function recordCost(record: CodonExecution | undefined): number {
  return record === undefined ? 0 : codonCost(record);
}

/** A run's cost: `+=` over its codons in array order. */
export function runCost(run: Run): number {
  let total = 0;
  for (const c of run.codons) total += codonCost(c);
  return total;
}

/** All-zero token counters. */
export function zeroTokenUsage(): TokenUsage {
  return { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 };
}

/** The tokens a record carries: finalTokens, partialTokens or currentTokens (zeros when none). */
export function recordTokens(record: CodonExecution): TokenUsage {
  const r = record as unknown as Record<string, unknown>;
  const t = (r.finalTokens ?? r.partialTokens ?? r.currentTokens) as Partial<TokenUsage> | undefined;
  const out = zeroTokenUsage();
  if (isObject(t)) {
    for (const k of Object.keys(out) as (keyof TokenUsage)[]) if (typeof t[k] === "number") out[k] = t[k] as number;
  }
  return out;
}

/** `a += b` per token field. */
export function addTokens(a: TokenUsage, b: TokenUsage): void {
  a.inputTokens += b.inputTokens;
  a.outputTokens += b.outputTokens;
  a.cacheCreationTokens += b.cacheCreationTokens;
  a.cacheReadTokens += b.cacheReadTokens;
}
