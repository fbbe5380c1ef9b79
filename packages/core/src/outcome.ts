/**
 * How a codon attempt ended: the one rule every summary uses (audit, summary, report, trace,
 * rebuild's summary, the main job). Pure.
 *
 * A record's outcome is its status when `completed` or `skipped`; a `failed` record is `crashed`
 * when RunCrashed made it (format §4.2 rule 3: exit code -1 and failure reason
 * `{type: "unknown", message: "Server crashed"}`, or known so from the line that ended it), else
 * `failed`; any other status is `running` (not ended).
 * @example outcomeOf({ codonId: "a", startTime: t, status: "completed", ... }) // "completed"
 */
import type { CodonExecution } from "./state-types.js";

/** How an attempt ended; `running` = not ended (yet); `crashed` = failed by RunCrashed. */
export type CodonOutcome = "completed" | "failed" | "crashed" | "skipped" | "running";

/** Every outcome, in the order counts are printed. */
export const OUTCOME_ORDER: readonly CodonOutcome[] = ["completed", "failed", "crashed", "skipped", "running"];

/** The message the reducer puts in a record failed by RunCrashed. */
export const CRASH_MESSAGE = "Server crashed";

/** True when `record` has the exact shape RunCrashed gives a failed record. */
export function isCrashRecord(record: CodonExecution | Record<string, unknown>): boolean {
  const r = record as Record<string, unknown>;
  if (r.status !== "failed" || r.exitCode !== -1) return false;
  const why = r.failureReason as Record<string, unknown> | undefined;
  return typeof why === "object" && why !== null && why.type === "unknown" && why.message === CRASH_MESSAGE;
}

/** The outcome of one codon record; `crashedByLine` = a fold saw it end on a RunCrashed line. */
export function outcomeOf(record: CodonExecution | Record<string, unknown>, crashedByLine = false): CodonOutcome {
  const status = (record as Record<string, unknown>).status;
  switch (status) {
    case "completed":
    case "skipped":
      return status;
    case "failed":
      return crashedByLine || isCrashRecord(record) ? "crashed" : "failed";
    default:
      return "running";
  }
}
