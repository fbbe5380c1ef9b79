/**
 * Fleets of executions (issue 19): discovery of execution directories under a root, batch work
 * over them, export to Parquet/NDJSON and SQL over the export. The CLI's `fleet` commands and the
 * `--all` forms of diet/verify/restore sit on this package.
 */
export { discoverExecutions, classifyExecution, DISCOVER_MAX_DEPTH } from "./discover.js";
export type { FleetEntry, JournalKind, DietKind, ManifestFacts, DiscoverOptions } from "./discover.js";
export { executionRow } from "./execution-row.js";
export type { FleetRow, LockState, RowSource } from "./execution-row.js";
export {
  parseFinishedBefore, parseStatusList, parseSortColumn, matchesFilter, isEmptyFilter, compareRows, STATUS_VALUES, SORT_COLUMNS,
} from "./filter.js";
export type { RowFilter, StatusValue, SortColumn } from "./filter.js";
export { listFleet, LIST_JOBS } from "./list.js";
export type { ListOptions } from "./list.js";
export { mapConcurrent } from "./pool.js";
export { EXPORT_SCHEMA_VERSION, EXPORT_TABLES, EXPORT_SCHEMA, duckdbColumns, clickhouseDdl, CLICKHOUSE_ORDER_BY } from "./export/schema.js";
export type { Column, ColumnType, ExportTable } from "./export/schema.js";
export {
  exportExecutions, prepareExportDir, executionId, journalFingerprint, PARTITION_FILE, EXPORT_META_FILE, MANIFESTS_DIR, TEMP_DIR, EXPORT_JOBS,
} from "./export/export.js";
export type { ExportFormat, ExportTarget, ExportOptions, ExportSummary, ExecutionResult, ExecutionStatus, ExecutionManifest } from "./export/export.js";
export { duckdb, setDuckdbRequirer } from "./export/duckdb.js";
export { exportTargets } from "./export/targets.js";
export type { ExportTargets } from "./export/targets.js";
export { streamFleetQuery, fleetQuery } from "./query/fleet-query.js";
export { runBatch, summarizeBatch, decideByKind } from "./batch.js";
export type { BatchOperation, BatchOutcome, BatchItem, BatchOptions, BatchSummary } from "./batch.js";
