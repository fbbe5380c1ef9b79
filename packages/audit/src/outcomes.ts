/**
 * The one definition of how a codon attempt ended (the rule: core's `outcomeOf`), and how
 * outcomes are counted, ordered and printed. `audit`, `summary`, `report`, the trace export and the main job all use it, so the same
 * execution is never "2 failed" in one place and "1 failed, 1 crashed" in another. Pure.
 *
 * Rule (format §4.2): a record's outcome is its status when terminal (`completed`, `failed`,
 * `skipped`), except that a failed record made by `RunCrashed` (exitCode -1, failureReason
 * `{type: "unknown", message: "Server crashed"}`, or known to be so from the journal line that
 * ended it) is `crashed`; any other status is `running` (not ended). Runs are listed oldest first
 * (the order they started), attempts in their run's array order (the order they started).
 */
import { CRASH_MESSAGE, OUTCOME_ORDER, isCrashRecord, outcomeOf, type CodonExecution, type Run, type TokenUsage } from "@hankweave-journal/core";
import type { AttemptOutcome } from "./audit-types.js";

// The rule itself lives in core (pure), so rebuild's state summary uses it too.
export { CRASH_MESSAGE, OUTCOME_ORDER, isCrashRecord, outcomeOf };

/** Outcome counts with every key present, in OUTCOME_ORDER. */
export type OutcomeCounts = Record<AttemptOutcome, number>;

/** Zero counts in OUTCOME_ORDER. */
export function zeroOutcomes(): OutcomeCounts {
  return { completed: 0, failed: 0, crashed: 0, skipped: 0, running: 0 };
}

/** Count outcomes. @example countOutcomes(["completed", "failed"]) // {completed: 1, failed: 1, crashed: 0, ...} */
export function countOutcomes(outcomes: Iterable<AttemptOutcome>): OutcomeCounts {
  const c = zeroOutcomes();
  for (const o of outcomes) c[o] += 1;
  return c;
}

/** `4 completed, 1 failed` (non-zero counts in OUTCOME_ORDER), or `none`. */
export function formatOutcomes(c: OutcomeCounts, none = "none"): string {
  const parts = OUTCOME_ORDER.filter((o) => c[o] > 0).map((o) => `${c[o]} ${o}`);
  return parts.length > 0 ? parts.join(", ") : none;
}

/** The runs of a state oldest first (state.json keeps them newest first). Returns a new array. */
export function runsOldestFirst<R extends Run>(runs: readonly R[]): R[] {
  return [...runs].reverse();
}

/** Outcome counts of a run's records (state.json or fold alike). */
export function runOutcomes(run: Run): OutcomeCounts {
  return countOutcomes(run.codons.map((c) => outcomeOf(c)));
}

/** Sum of the four token counts. */
export function tokenTotal(t: TokenUsage): number {
  return t.inputTokens + t.outputTokens + t.cacheCreationTokens + t.cacheReadTokens;
}

/**
 * Why an attempt did not complete, in words, or null for completed/running ones: the failure
 * reason (`type: message`, with `during <status>` and the exit code), `Server crashed during
 * <status>` for a crash, `skipped during <status>` for a skip.
 * @example reasonOf(rec) // "budget_exceeded: Budget exceeded (during running, exit code 1)"
 */
export function reasonOf(record: CodonExecution | Record<string, unknown>, outcome: AttemptOutcome = outcomeOf(record)): string | null {
  const r = record as Record<string, unknown>;
  if (outcome === "skipped") {
    const during = typeof r.skippedDuring === "string" ? r.skippedDuring : "?";
    const partial = typeof r.partialCost === "number" && r.partialCost > 0 ? r.partialCost : 0;
    // The runtime's cost rule counts a skipped codon as 0 whatever it spent before the skip.
    return partial > 0 ? `skipped during ${during} (its partial cost $${partial.toFixed(4)} is not counted: a skipped codon costs 0)` : `skipped during ${during}`;
  }
  if (outcome !== "failed" && outcome !== "crashed") return null;
  const why = r.failureReason as Record<string, unknown> | undefined;
  const type = typeof why?.type === "string" ? why.type : null;
  const message = typeof why?.message === "string" ? why.message : null;
  const head = [type, message].filter((x) => x !== null && x !== "").join(": ") || "no failure reason recorded";
  const extra: string[] = [];
  if (typeof r.failedDuring === "string") extra.push(`during ${r.failedDuring}`);
  if (typeof r.exitCode === "number") extra.push(`exit code ${r.exitCode}`);
  return extra.length > 0 ? `${head} (${extra.join(", ")})` : head;
}
