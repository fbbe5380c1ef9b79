export { JournalError, isJournalError, ERROR_CODES } from "./errors.js";
export type { ErrorCode, ErrorDetails } from "./errors.js";
export { nativeModule } from "./native-module.js";
export {
  layoutOf, resolveExec, joinPath, isSha256Hex,
  HANKWEAVE_DIR, EVENTS_DIR, JOURNAL_FILE, SIDECAR_FILE, DIETED_JOURNAL_FILE, MANIFEST_FILE, CAS_DIR,
  STATE_FILE, LOCK_FILE, LOCK_TMP_PREFIX, EXECUTION_META_FILE, INDEX_FILE, TORN_PREFIX,
} from "./layout.js";
export type { ExecLayout, ExecRef } from "./layout.js";
export {
  categoryOf, isJournaledType, ALL_EVENT_TYPES, SERVER_STATE_TYPES, AGENTIC_BACKBONE_TYPES, SENTINEL_TYPES,
  CONNECTION_STATE_TYPES, PLAN_UPDATED_TYPE,
} from "./catalog.js";
export type { EventCategory } from "./catalog.js";
export type {
  JournalEvent, JournalRecord, RawLine, Finding, FindingSeverity, LineRange, ScanOptions, JournalInfo,
  PageResult, JournalReader, LinePosition, LineChunk, ChunkOptions,
} from "./reader-contract.js";
export type {
  TokenUsage, CodonStatus, RunStatus, LoopContext, CodonExecution, StartingConditions, Run, HankweaveState,
  StateTransition, ResultingState,
  TerminalCodonStatus, SentinelState, LoadedSentinels, ExecutedSentinels, BudgetExceeded, FailureReason,
  PreparingCodon, StartingCodon, InitializingCodon, RunningCodon, CompletingSentinelsCodon, CompletedCodon,
  FailedCodon, SkippedCodon, ExecutionCodonEntry, TransitionMetadata, CheckpointType, StateTransitionType,
  StateTransitionEventData, RunStartedTransition, RunCompletedTransition, RunFailedTransition,
  RunCrashedTransition, CodonStartedTransition, CodonTransitionedTransition, CostsUpdatedTransition,
  CostsIncrementedTransition, AssistantMessageCountUpdatedTransition, ExtensionCountUpdatedTransition,
  CheckpointCreatedTransition, InitialCheckpointSetTransition, CodonFinalCostSetTransition,
  SentinelStatesUpdatedTransition,
} from "./state-types.js";
export { initialState, evolve, evolveReport, nextResultingState, planTransition } from "./reducer.js";
export type { EvolveResult, TransitionPlan } from "./reducer.js";
export { applyEditInPlace } from "./reducer-inplace.js";
export type { CodonEditPlan } from "./reducer-inplace.js";
export { codonCost, totalCost, currentRunCost } from "./costs.js";
export { OUTCOME_ORDER, CRASH_MESSAGE, isCrashRecord, outcomeOf } from "./outcome.js";
export type { CodonOutcome } from "./outcome.js";
export {
  CODON_STATUSES, CODON_TRANSITIONS, isCodonStatus, isTerminalCodonStatus, isValidCodonEdge, missingMetadata,
} from "./transition-map.js";
export { TRANSITION_TYPES, checkShape } from "./transition-shape.js";
export type { ReducerFindingCode } from "./reducer-findings.js";
export {
  codonStatusSchema, tokenUsageSchema, failureReasonSchema, budgetExceededSchema, loopContextSchema, sentinelStateSchema,
  contentRefSchema, executionCodonEntrySchema,
} from "./schemas/common.js";
export {
  startingConditionsSchema, transitionMetadataSchema, TRANSITION_SCHEMAS, stateTransitionSchema, resultingStateSchema,
  stateTransitionEventDataSchema,
} from "./schemas/transition-schemas.js";
export {
  CODON_RECORD_SCHEMAS, codonExecutionSchema, runSchema, hankweaveStateSchema, safeParseState, parseState,
} from "./schemas/state-schemas.js";
export type { SafeParseStateResult } from "./schemas/state-schemas.js";
export {
  EVENT_PAYLOAD_SCHEMAS, envelopeSchema, fileUpdatedV1Schema, fileUpdatedV2Schema, fileUpdatedDietedSchema, ISO_TIMESTAMP_RE,
} from "./schemas/event-schemas.js";
export type { KnownEvent, KnownEventType, EventDataOf } from "./schemas/event-schemas.js";
export { parseEvent, safeParseEvent, validateEnvelope, knownEvent } from "./schemas/parse-event.js";
export type { CheckedEvent, SafeParseEventResult } from "./schemas/parse-event.js";
export { escapeTerminal, escapeTerminalText } from "./terminal-text.js";
