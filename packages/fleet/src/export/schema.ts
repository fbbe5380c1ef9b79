/**
 * The schema of a fleet export (docs/fleet-export.md): four tables, each a list of columns with a
 * DuckDB/Parquet type and a meaning. The one place that names them: the writers, the NDJSON
 * reader of `fleet query`, the `_export.json` file and the docs table are made from it.
 *
 * Version policy: EXPORT_SCHEMA_VERSION changes whenever a column is added, removed, renamed or
 * changes type or meaning; an export written under an older version is rewritten in full by the
 * next `export` into the same directory (every execution counts as changed); one written by a newer
 * version is refused (EXPORT_DIR_INVALID) rather than mixed.
 */

/** Version of the export schema (stored in `_export.json`, every manifest and every Parquet file's key-value metadata). */
export const EXPORT_SCHEMA_VERSION = 1;

/** Column types used (DuckDB names; in Parquet: BIGINT = INT64, DOUBLE, VARCHAR = UTF8 string, BOOLEAN). */
export type ColumnType = "BIGINT" | "DOUBLE" | "VARCHAR" | "BOOLEAN";

export interface Column {
  name: string;
  type: ColumnType;
  /** NOT NULL when false. */
  nullable: boolean;
  meaning: string;
}

/** The tables, in the order docs and summaries list them. */
export const EXPORT_TABLES = ["runs", "codon_attempts", "transitions", "events"] as const;
export type ExportTable = (typeof EXPORT_TABLES)[number];

const c = (name: string, type: ColumnType, nullable: boolean, meaning: string): Column => ({ name, type, nullable, meaning });

/** Columns every table starts with. The Hive partition key `execution` (the directory name) carries the same id. */
const EXECUTION_COLUMNS: Column[] = [
  c("execution_id", "VARCHAR", false, "the execution's id (also the `execution=` partition directory): `<name>-<12 hex>`, see Execution ids"),
  c("execution_path", "VARCHAR", false, "the execution directory relative to the exported root, `/`-separated (its base name when one execution was exported)"),
];

const TOKENS = (what: string): Column[] => [
  c("input_tokens", "BIGINT", false, `input tokens of the ${what}`),
  c("output_tokens", "BIGINT", false, `output tokens of the ${what}`),
  c("cache_creation_tokens", "BIGINT", false, `cache-creation input tokens of the ${what}`),
  c("cache_read_tokens", "BIGINT", false, `cache-read input tokens of the ${what}`),
];

/** Columns of each table, in file order. */
export const EXPORT_SCHEMA: Record<ExportTable, Column[]> = {
  runs: [
    ...EXECUTION_COLUMNS,
    c("run_seq", "BIGINT", false, "chronological position of the run in its execution, from 0 (run ids can repeat)"),
    c("run", "VARCHAR", false, "the runId"),
    c("status", "VARCHAR", false, "the run's status in the folded state (running, completed, failed, crashed, …)"),
    c("start_line", "BIGINT", true, "journal line (from 0) of its RunStarted"),
    c("end_line", "BIGINT", true, "journal line of its RunCompleted / RunFailed / RunCrashed (NULL: not ended)"),
    c("start_time", "VARCHAR", true, "the run's startTime, ISO-8601 as journaled"),
    c("end_time", "VARCHAR", true, "the run's endTime, ISO-8601 as journaled (NULL: not ended)"),
    c("cost", "DOUBLE", false, "sum of the run's codon attempt costs (USD)"),
    c("attempts", "BIGINT", false, "number of codon attempts (records) of the run"),
    ...TOKENS("run"),
  ],
  codon_attempts: [
    ...EXECUTION_COLUMNS,
    c("run_seq", "BIGINT", false, "the run's `run_seq`"),
    c("run", "VARCHAR", false, "the runId"),
    c("codon", "VARCHAR", false, "the codonId"),
    c("attempt", "BIGINT", false, "1-based count of records with this codonId in this run (retries and loop iterations)"),
    c("idx", "BIGINT", false, "position of the record in the run's codons array"),
    c("start_line", "BIGINT", true, "journal line of the transition that created the record (NULL or -1: unknown)"),
    c("end_line", "BIGINT", true, "journal line of the transition that ended it (NULL: not ended)"),
    c("start_time", "VARCHAR", true, "the record's startTime, ISO-8601 as journaled"),
    c("end_time", "VARCHAR", true, "the record's endTime (NULL: not ended)"),
    c("status", "VARCHAR", false, "the record's status in the folded state"),
    c("outcome", "VARCHAR", false, "how the attempt ended: completed, failed, crashed, skipped, running, … (audit's outcomeOf)"),
    c("cost", "DOUBLE", false, "the attempt's cost (USD)"),
    ...TOKENS("attempt"),
    c("loop_id", "VARCHAR", true, "loop id of a loop iteration (NULL outside loops)"),
    c("loop_iteration", "BIGINT", true, "loop iteration (NULL outside loops)"),
    c("failure_reason", "VARCHAR", true, "the record's failureReason as `type: message` (NULL when none)"),
    c("reason", "VARCHAR", true, "why a failed, crashed or skipped attempt did not complete (audit's reasonOf), else NULL"),
  ],
  transitions: [
    ...EXECUTION_COLUMNS,
    c("line", "BIGINT", false, "journal line (from 0) of the state.transition event"),
    c("byte_offset", "BIGINT", false, "byte offset of that line in the original events.jsonl"),
    c("time", "VARCHAR", false, "the event's timestamp, as journaled"),
    c("type", "VARCHAR", false, "the transition type (RunStarted, CodonTransitioned, …)"),
    c("run", "VARCHAR", true, "the run it targets"),
    c("codon", "VARCHAR", true, "the codon it targets"),
    c("from_status", "VARCHAR", true, "CodonTransitioned: the status before"),
    c("to_status", "VARCHAR", true, "CodonTransitioned: the status after"),
    c("applied", "BOOLEAN", false, "false when the reducer dropped the transition (see `audit`)"),
    c("codon_cost_after", "DOUBLE", true, "cost of the codon's latest record after the transition"),
    c("run_cost_after", "DOUBLE", true, "cost of the run after the transition"),
    c("journaled_current_run_id", "VARCHAR", true, "resultingState.currentRunId as journaled (NULL when absent or not a string)"),
    c("journaled_run_count", "BIGINT", true, "resultingState.runCount as journaled"),
    c("journaled_total_cost", "DOUBLE", true, "resultingState.totalCost as journaled"),
    c("journaled_current_run_cost", "DOUBLE", true, "resultingState.currentRunCost as journaled"),
    c("recomputed_current_run_id", "VARCHAR", true, "currentRunId recomputed by the fold"),
    c("recomputed_run_count", "BIGINT", false, "runCount recomputed by the fold"),
    c("recomputed_total_cost", "DOUBLE", false, "totalCost recomputed by the fold"),
    c("recomputed_current_run_cost", "DOUBLE", false, "currentRunCost recomputed by the fold"),
  ],
  events: [
    ...EXECUTION_COLUMNS,
    c("line", "BIGINT", false, "physical journal line, from 0"),
    c("byte_offset", "BIGINT", false, "byte offset of the line in the original events.jsonl"),
    c("id", "VARCHAR", false, "the event id (not unique by contract)"),
    c("time", "VARCHAR", false, "the event's timestamp, as journaled"),
    c("type", "VARCHAR", false, "the event type"),
    c("category", "VARCHAR", false, "the event's category in the catalog (state, agent, tool, sentinel, …)"),
    c("run", "VARCHAR", true, "the run current at that line"),
    c("codon", "VARCHAR", true, "the codon of the event, when it names one"),
    c("size", "BIGINT", false, "bytes of the line without its newline"),
    c("payload", "VARCHAR", true, "the line itself (the whole JSON event, byte for byte) with --payloads, else NULL"),
  ],
};

/** `{name: 'TYPE', …}` for DuckDB's read_json `columns=` parameter. */
export function duckdbColumns(table: ExportTable): string {
  return `{${EXPORT_SCHEMA[table].map((col) => `${col.name}: '${col.type}'`).join(", ")}}`;
}

/** The schema as stored in `_export.json`. */
export function schemaJson(): Record<ExportTable, { name: string; type: ColumnType; nullable: boolean; meaning: string }[]> {
  return EXPORT_SCHEMA;
}

const CLICKHOUSE_TYPES: Record<ColumnType, string> = { BIGINT: "Int64", DOUBLE: "Float64", VARCHAR: "String", BOOLEAN: "Bool" };

/** Sort keys of the ClickHouse tables of the README (one execution's rows together, then its order). */
export const CLICKHOUSE_ORDER_BY: Record<ExportTable, string> = {
  runs: "(execution_id, run_seq)",
  codon_attempts: "(execution_id, run_seq, idx)",
  transitions: "(execution_id, line)",
  events: "(execution_id, line)",
};

/**
 * The ClickHouse `CREATE TABLE` of `table` (MergeTree, sorted by execution then journal order),
 * as docs/fleet-export.md and the README print it; `database` prefixes the name when given.
 */
export function clickhouseDdl(table: ExportTable, database?: string): string {
  const cols = EXPORT_SCHEMA[table].map((col) => {
    const t = CLICKHOUSE_TYPES[col.type];
    return `  ${col.name} ${col.nullable ? `Nullable(${t})` : t}`;
  });
  return `CREATE TABLE ${database ? `${database}.` : ""}${table}\n(\n${cols.join(",\n")}\n)\nENGINE = MergeTree\nORDER BY ${CLICKHOUSE_ORDER_BY[table]};`;
}
