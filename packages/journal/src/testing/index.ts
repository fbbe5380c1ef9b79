// Test helpers for journal readers: the shared reader contract suite, its oracle and case corpora.
export { defineReaderContract } from "./reader-contract.js";
export type { ReaderSetup } from "./reader-contract.js";
export { journalOracle, oracleFiltered, oracleSniff, makeExecWithJournal } from "./journal-oracle.js";
export type { Oracle, OracleLine, OracleEvent, OracleFinding } from "./journal-oracle.js";
export { readerContractCases, randomJournal, eventLine, prng } from "./journal-cases.js";
export { bundleCli, bundleCrashChild, runCrashChild, workspaceWorkers } from "./crash-children.js";
export type { KillPlan, CrashRun, BundleOptions } from "./crash-children.js";
