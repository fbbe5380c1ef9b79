// Test helpers of the audit package (the `@hankweave-journal/audit/testing` entry): conformance
// copies with planted defects and a synthetic all-outcomes execution.
export { CONF, SMALL_JOURNALS, copyExecution, journalLines, writeJournal, plantDefects, transitionLine } from "./plant.js";
export type { Planted } from "./plant.js";
export { writeSyntheticExecution } from "./synthetic.js";
export type { SyntheticOptions } from "./synthetic.js";
