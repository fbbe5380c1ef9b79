/**
 * Small pure helpers of the audit fold: envelope checks of a `state.transition`, the
 * resultingState comparison, and cost/token sums over codon records (format §4.3).
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

/** Null when `data` is a well-formed `state.transition` payload (format §2.3). */
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

const CANONICAL_TIME_LENGTH = 24; // YYYY-MM-DDTHH:MM:SS.mmmZ

/** True when `t[17..23]` is `SS.mmmZ` with SS ≤ 59. */
function canonicalSecondsTail(t: string): boolean {
  const s1 = t.charCodeAt(17) - 48;
  const s2 = t.charCodeAt(18) - 48;
  return s1 >= 0 && s1 <= 5 && s2 >= 0 && s2 <= 9 && t.charCodeAt(19) === 46 && isDigitAt(t, 20) && isDigitAt(t, 21) && isDigitAt(t, 22) && t.charCodeAt(23) === 90;
}

function isDigitAt(t: string, i: number): boolean {
  const c = t.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** True when `t[0..16]` is `YYYY-MM-DDTHH:MM:` (digits and separators; values are checked by Date.parse of the previous time). */
function canonicalMinutePrefix(t: string): boolean {
  for (let i = 0; i < 17; i++) {
    const c = t.charCodeAt(i);
    const want = i === 4 || i === 7 ? 45 : i === 10 ? 84 : i === 13 || i === 16 ? 58 : -1;
    if (want === -1 ? c < 48 || c > 57 : c !== want) return false;
  }
  return true;
}

function secondsTailMs(t: string): number {
  return (t.charCodeAt(17) - 48) * 10000 + (t.charCodeAt(18) - 48) * 1000 + (t.charCodeAt(20) - 48) * 100 + (t.charCodeAt(21) - 48) * 10 + (t.charCodeAt(22) - 48);
}

/**
 * `Date.parse(t)` without parsing when `t` and the previous (valid) timestamp are canonical and
 * share their minute (`YYYY-MM-DDTHH:MM:`, hour not 24): then they differ only by seconds and
 * milliseconds, so `prev.ms − prevTail + tail` is exactly what Date.parse returns. Otherwise it
 * calls Date.parse. `prev.ms` must be `Date.parse(prev.time)`.
 * @example msSameMinute("2026-03-05T18:50:19.000Z", { time: "2026-03-05T18:50:18.415Z", ms: Date.parse("2026-03-05T18:50:18.415Z") })
 */
export function msSameMinute(t: string, prev: { time: string; ms: number }): number {
  const p = prev.time;
  if (t.length !== CANONICAL_TIME_LENGTH || p.length !== CANONICAL_TIME_LENGTH) return Date.parse(t);
  for (let i = 16; i >= 0; i--) if (t.charCodeAt(i) !== p.charCodeAt(i)) return Date.parse(t);
  if (!canonicalMinutePrefix(t)) return Date.parse(t);
  if (t.charCodeAt(11) === 50 && t.charCodeAt(12) === 52) return Date.parse(t); // hour 24 is valid only as 24:00:00.000
  if (!canonicalSecondsTail(t) || !canonicalSecondsTail(p)) return Date.parse(t);
  return prev.ms - secondsTailMs(p) + secondsTailMs(t);
}
