/**
 * The public library of `hankweave-journal`: read a journal (plain or dieted), tail it, fold its
 * state, diet and restore it, audit it. Everything else in the workspace packages is internal and
 * may change without notice. Documented in the README ("Build tools on the library").
 *
 * @example
 * import { openReader, foldJournal } from "hankweave-journal";
 * const reader = await openReader("/runs/x");
 * const { state } = await foldJournal(reader);
 * await reader.close();
 */
// --- errors and the on-disk layout
export { JournalError, isJournalError, ERROR_CODES, layoutOf } from "@hankweave-journal/core";
export type { ErrorCode, ErrorDetails, ExecLayout, ExecRef } from "@hankweave-journal/core";
// --- events: the envelope, the catalog, the payload schemas and their inferred types
export {
  parseEvent, safeParseEvent, knownEvent, validateEnvelope, EVENT_PAYLOAD_SCHEMAS, envelopeSchema, ALL_EVENT_TYPES, categoryOf,
  isJournaledType,
} from "@hankweave-journal/core";
export type {
  JournalEvent, JournalRecord, RawLine, Finding, FindingSeverity, LineRange, ScanOptions, JournalInfo, PageResult, JournalReader,
  CheckedEvent, SafeParseEventResult, EventCategory, KnownEvent, KnownEventType, EventDataOf,
} from "@hankweave-journal/core";
// --- state: the types, the pure reducer
export { initialState, evolve, hankweaveStateSchema, safeParseState, parseState } from "@hankweave-journal/core";
export type {
  HankweaveState, Run, RunStatus, CodonExecution, CodonStatus, TokenUsage, StateTransition, StateTransitionEventData,
  EvolveResult,
} from "@hankweave-journal/core";
// --- reading (plain and dieted alike) and writing
export { openReader } from "@hankweave-journal/diet";
export { openJournalWriter } from "@hankweave-journal/journal";
export type { Durability, WriterOptions, JournalWriter, NewEvent, AppendedEvent } from "@hankweave-journal/journal";
// --- folding state from the journal, time travel, diffs
export { foldJournal, foldExecution, parseCursor, stateAt, diffStates, readStateFile, summarizeState } from "@hankweave-journal/state";
export type {
  FoldOptions, FoldOutcome, ExecutionFold, Cursor, StateAt, StateDifference, StateFileRead, StateSummary,
} from "@hankweave-journal/state";
// --- diet and restore
export { planDiet, applyDiet, restoreJournal, verifyDiet } from "@hankweave-journal/diet";
export type { DietKind, DietOptions, DietPlan, DietResult, RestoreResult, DietVerification } from "@hankweave-journal/diet";
// --- audit, index, verify, report
export { auditExecution, streamAudit, buildIndex, queryIndex, verifyExecution, writeReport } from "@hankweave-journal/audit";
export type {
  AuditReport, AuditFinding, AuditFilter, IndexResult, QueryResult, VerifyReport, ReportResult,
} from "@hankweave-journal/audit";
