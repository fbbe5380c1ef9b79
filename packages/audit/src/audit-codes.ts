/**
 * The stable finding codes of `audit`, `index` and `verify`, each with its severity and a
 * one-line meaning. `docs/audit.md` lists the same table; tests branch on codes, never messages.
 *
 * Severity policy: `error` means the journal (or a file derived from it) says something that
 * cannot be true or cannot be read; `warning` means something unusual that a healthy journal of
 * the reference runtime may still show (ids are not unique by contract, clocks jitter, a crash
 * leaves a torn tail); `info` is context. `audit` exits 1 only on errors; `verify` on any finding
 * of severity error or warning.
 */
import type { FindingSeverity } from "@hankweave-journal/core";

/** One documented code. */
export interface AuditCodeInfo {
  severity: FindingSeverity;
  meaning: string;
}

/** Every code an audit or verify can report. */
export const AUDIT_CODES = {
  // --- lines (from the reader)
  CORRUPT_LINE: { severity: "error", meaning: "a complete line is not a JSON object with id, timestamp, type and data" },
  INVALID_UTF8: { severity: "error", meaning: "a complete line is not valid UTF-8" },
  TORN_TAIL: { severity: "warning", meaning: "the journal ends with an unterminated fragment (a write cut short); it is not an event" },
  // --- envelope
  DUPLICATE_ID: { severity: "warning", meaning: "an event id already used by an earlier line (ids are not unique by contract; order is file position)" },
  TIME_BACKWARDS: { severity: "warning", meaning: "a line's timestamp is earlier than the previous event's" },
  BAD_TIMESTAMP: { severity: "warning", meaning: "a timestamp is not an ISO-8601 time" },
  // --- transitions
  MALFORMED_TRANSITION: { severity: "error", meaning: "a state.transition lacks transition {type, data} or its transitionType/runId/codonId copies disagree" },
  INVALID_TRANSITION: { severity: "error", meaning: "a CodonTransitioned edge is not in the transition map (dropped by the reducer)" },
  MISSING_METADATA: { severity: "error", meaning: "a CodonTransitioned lacks the metadata its target status requires (dropped)" },
  UNKNOWN_RUN: { severity: "error", meaning: "a transition names a run that does not exist (no-op)" },
  // A warning, not an error: the reference runtime itself journals SentinelStatesUpdated under a
  // loop's base codon id (no `#n`), which has no record (plan-gen-execution lines 3628, 4676, 5380).
  UNKNOWN_CODON: { severity: "warning", meaning: "a transition names a codon with no record in its run (no-op)" },
  NO_TARGET_RECORD: { severity: "info", meaning: "the codon has records but none in the status the rule targets: a no-op (the reducer's severity: info, warning for CodonTransitioned)" },
  UNKNOWN_TRANSITION_TYPE: { severity: "error", meaning: "a transition type outside the 14 StateTransition types (no-op)" },
  RESULTING_STATE_MISMATCH: { severity: "error", meaning: "the journaled resultingState differs from the recomputed one (details: field, journaled, recomputed, delta)" },
  RESULTING_STATE_MISSING: { severity: "warning", meaning: "a state.transition carries no resultingState to check" },
  DUPLICATE_RUN: { severity: "error", meaning: "RunStarted for a run id that already exists (the state then holds two runs with one id)" },
  DUPLICATE_ACTIVE_CODON: { severity: "error", meaning: "CodonStarted while the run already has a non-terminal record for that codon" },
  EVENT_AFTER_RUN_END: { severity: "error", meaning: "a transition for a run after that run's RunCompleted / RunFailed / RunCrashed" },
  // --- verify
  SIDECAR_INVALID: { severity: "error", meaning: "events.meta.json is not a valid sidecar" },
  SIDECAR_MISMATCH: { severity: "error", meaning: "events.meta.json vouches for more bytes than the file has, or its counts/last id disagree with the file" },
  SIDECAR_STALE: { severity: "info", meaning: "events.meta.json covers a prefix of the file (normal between sidecar writes)" },
  MANIFEST_INVALID: { severity: "error", meaning: "journal.meta.json is missing fields or disagrees with the journal" },
  CAS_MISSING: { severity: "error", meaning: "a blob referenced by the journal is missing" },
  CAS_CORRUPT: { severity: "error", meaning: "a blob does not decompress to its SHA-256" },
  RESTORE_MISMATCH: { severity: "error", meaning: "a restore dry run does not reproduce originalSha256 / originalBytes" },
  STATE_MISMATCH: { severity: "error", meaning: "the fold of the journal differs from state.json" },
  STATE_UNREADABLE: { severity: "error", meaning: "state.json exists but cannot be parsed" },
} as const satisfies Record<string, AuditCodeInfo>;

/** A stable audit/verify finding code. */
export type AuditCode = keyof typeof AUDIT_CODES;

/** The documented severity of `code`; `fallback` (default `error`) for codes outside the table. */
export function severityOf(code: string, fallback: FindingSeverity = "error"): FindingSeverity {
  const info = (AUDIT_CODES as Record<string, AuditCodeInfo>)[code];
  return info ? info.severity : fallback;
}
