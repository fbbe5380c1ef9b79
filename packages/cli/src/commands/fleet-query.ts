/**
 * `fleet query <export-dir> "<SQL>"`: read-only SQL over a fleet export (Parquet or NDJSON, see
 * docs/fleet-export.md) through embedded DuckDB, printed as `query` prints (table or --json).
 */
import { QUERY_MAX_ROWS, QUERY_TIMEOUT_MS } from "@hankweave-journal/audit";
import { streamFleetQuery } from "@hankweave-journal/fleet";
import { intFlag, parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";
import { cliPath } from "../exec-path.js";
import { printQueryRows } from "./query.js";

export interface FleetQueryArgs {
  dir: string;
  sql: string;
  json: boolean;
  maxRows: number;
  timeoutMs: number;
}

const HELP = `usage: hankweave-journal fleet query <export-dir> "<SQL>" [--json] [--max-rows N] [--timeout S]

Runs one read-only SQL statement (SELECT / WITH … SELECT) with embedded DuckDB over an export
written by \`hankweave-journal export <root> -o <export-dir>\` (Parquet or NDJSON) and prints a
table, or with --json one object {columns, rows: [{column: value}]}. Views: runs,
codon_attempts, transitions, events (the columns of docs/fleet-export.md plus the partition key
\`execution\`). Anything but one SELECT is refused with QUERY_INVALID (COPY, ATTACH, INSERT, SET,
PRAGMA, INSTALL …); DuckDB runs with enable_external_access = false and only the export directory
allowed, so a query reads no other file and writes nothing. Needs the @duckdb/node-api native
module (NATIVE_MODULE_UNAVAILABLE otherwise; every other command still works).

  --json        JSON output
  --max-rows N  fail with QUERY_TOO_LARGE after N rows (default ${QUERY_MAX_ROWS}); rows are
                printed as they come
  --timeout S   interrupt the query and fail with QUERY_TIMEOUT after S seconds (default ${QUERY_TIMEOUT_MS / 1000})

Examples:
  hankweave-journal fleet query /exports/ci "SELECT codon, count(*) AS n, sum(cost) AS cost FROM codon_attempts GROUP BY codon ORDER BY cost DESC LIMIT 10"
  hankweave-journal fleet query /exports/ci "SELECT outcome, count(*) FROM codon_attempts GROUP BY ALL" --json

Exit codes: 0 ok, 1 failure (QUERY_INVALID, QUERY_TOO_LARGE, QUERY_TIMEOUT, EXPORT_DIR_INVALID, NATIVE_MODULE_UNAVAILABLE), 2 usage.`;

export const fleetQueryCommand: Command<FleetQueryArgs> = {
  name: "query",
  summary: "read-only SQL (DuckDB) over a fleet export (table or --json)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" }, "max-rows": { type: "string" }, timeout: { type: "string" } }, { min: 2, max: 2 });
    const timeout = intFlag(p.values.timeout, "--timeout");
    return {
      dir: p.positionals[0], sql: p.positionals[1], json: p.values.json === true,
      maxRows: intFlag(p.values["max-rows"], "--max-rows") ?? QUERY_MAX_ROWS, timeoutMs: timeout === undefined ? QUERY_TIMEOUT_MS : timeout * 1000,
    };
  },
  async run(args, io) {
    const dir = cliPath(io, args.dir);
    const limits = { maxRows: args.maxRows, timeoutMs: args.timeoutMs };
    return printQueryRows(args.json, io, (onColumns, onRow) => streamFleetQuery(dir, args.sql, onColumns, onRow, limits));
  },
};
