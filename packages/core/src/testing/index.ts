/**
 * Test helpers of the core package (`@hankweave-journal/core/testing`). Never import this from
 * production code: it is a separate entry point precisely so that nothing ships with it.
 */
export { given, assertState, clockAt, deepFreeze } from "./given-then.js";
export type { GivenStep, Spec, FoldOutcome } from "./given-then.js";
export { T, META, tokens, sentinel, toRunning } from "./transitions.js";
export { runRecord, stateOf, runningRecord } from "./expected-records.js";
export { validTransitionSequence, anyTransition } from "./arbitraries.js";
export type { TimedTransition } from "./arbitraries.js";
