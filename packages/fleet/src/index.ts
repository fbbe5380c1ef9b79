/**
 * Fleets of executions (issue 19): discovery of execution directories under a root, batch work
 * over them, export to Parquet/NDJSON and SQL over the export. The CLI's `fleet` commands and the
 * `--all` forms of diet/verify/restore sit on this package.
 */
export { discoverExecutions, classifyExecution, DISCOVER_MAX_DEPTH } from "./discover.js";
export type { FleetEntry, JournalKind, DietKind, ManifestFacts, DiscoverOptions } from "./discover.js";
