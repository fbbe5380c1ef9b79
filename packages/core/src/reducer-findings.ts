/**
 * Findings of the reducer: what a dropped or no-op transition becomes (format §4.2: "an invalid edge
 * or missing metadata drops the transition (state unchanged) and is a finding").
 */
import type { Finding, FindingSeverity } from "./reader-contract.js";
import type { ErrorCode } from "./errors.js";
import type { HankweaveState } from "./state-types.js";

/** The codes the reducer emits (all listed in ERROR_CODES). */
export type ReducerFindingCode = Extract<
  ErrorCode,
  "INVALID_TRANSITION" | "MISSING_METADATA" | "UNKNOWN_RUN" | "UNKNOWN_CODON" | "NO_TARGET_RECORD"
  | "MALFORMED_TRANSITION" | "UNKNOWN_TRANSITION_TYPE"
>;

/** A Finding about transition `t`; `details` carries the transition type, run and codon ids. */
export function findingOf(
  code: ReducerFindingCode,
  severity: FindingSeverity,
  message: string,
  t: unknown,
  extra: Record<string, unknown> = {},
): Finding {
  const tt = (typeof t === "object" && t !== null ? t : {}) as { type?: unknown; data?: unknown };
  const data = (typeof tt.data === "object" && tt.data !== null ? tt.data : {}) as Record<string, unknown>;
  const details: Record<string, unknown> = {};
  if (tt.type !== undefined) details.transitionType = tt.type;
  if (data.runId !== undefined) details.runId = data.runId;
  if (data.codonId !== undefined) details.codonId = data.codonId;
  if (data.from !== undefined) details.from = data.from;
  if (data.to !== undefined) details.to = data.to;
  return { code, severity, message, details: { ...details, ...extra } };
}

/** `{state, finding}` with the input state object itself (nothing changed). */
export function dropped(state: HankweaveState, finding: Finding): { state: HankweaveState; finding: Finding } {
  return { state, finding };
}
