// State as a projection of the journal (format §2.3, §4): fold, write-ahead engine, rebuild, time travel.
export { StateFolder, FOLD_TYPES, NATIVE_FOLD_TYPES, transitionOf } from "./state-folder.js";
export type { FoldResult, FoldInput, JournalOrigin } from "./state-folder.js";
export { patchForeignClock, sameExecution } from "./foreign-clock.js";
export type { FieldSource, ClockFacts, PatchedState } from "./foreign-clock.js";
export { foldJournal, foldExecution } from "./fold-journal.js";
export type { FoldOptions, FoldOutcome, ExecutionFold } from "./fold-journal.js";
export { parseCursor, resolveCursor, stateAt } from "./state-at.js";
export type { Cursor, ResolvedCursor, StateAt } from "./state-at.js";
export { diffStates } from "./diff-state.js";
export type { StateDifference } from "./diff-state.js";
export {
  serializeState, parseStateText, isStateShape, readStateFile, readSavedStates, savedStateOf, writeStateText, saveState,
} from "./state-file.js";
export type { StateFileRead, SavedStates, SaveOptions } from "./state-file.js";
export { openStateEngine } from "./state-engine.js";
export type { StateEngine, StateEngineOptions } from "./state-engine.js";
export { checkSavedState, detectCrashedRuns, isPidDead, savedStateIsOnlyCopy, onlyCopyError } from "./engine-open.js";
export type { OpenReport, SavedStateStatus } from "./engine-open.js";
export { summarizeState } from "./state-summary.js";
export { HotTransitionParser } from "./hot-transitions.js";
export type { StateSummary } from "./state-summary.js";
