/**
 * `fleet query <export-dir> "SQL"`: read-only SQL over an export (Parquet or NDJSON) through
 * embedded DuckDB. An in-memory database gets one view per table over every partition
 * (`read_parquet('<dir>/<table>/*\/*.parquet', hive_partitioning = true)`, or `read_json` with the
 * schema's columns for NDJSON), so each table has the schema's columns plus the Hive key
 * `execution`. Then the connection is shut in: `allowed_directories` = the export directory,
 * `enable_external_access = false` (no other file, no URL, no extension install/load) and
 * `lock_configuration = true` (no SET can undo it).
 *
 * Guarantees: exactly one statement, and it must be a SELECT (WITH … SELECT, VALUES): COPY,
 * ATTACH, INSERT, CREATE, SET, PRAGMA, EXPORT, INSTALL … are refused with QUERY_INVALID before
 * they run; the export's files are only read. Rows are streamed chunk by chunk and bounded like
 * `query` (QUERY_TOO_LARGE past `maxRows`, QUERY_TIMEOUT past `timeoutMs`: the query is
 * interrupted, even one that produces no row). BIGINT values come back as numbers (as strings
 * beyond 2^53), DOUBLE as numbers, BOOLEAN as booleans.
 */
import * as fsp from "node:fs/promises";
import path from "node:path";
import { JournalError, isJournalError } from "@hankweave-journal/core";
import { QUERY_MAX_ROWS, QUERY_TIMEOUT_MS, type QueryLimits } from "@hankweave-journal/audit";
import { duckdb, sqlString } from "../export/duckdb.js";
import { EXPORT_META_FILE, PARTITION_FILE, type ExportFormat } from "../export/export.js";
import { EXPORT_SCHEMA, EXPORT_TABLES, duckdbColumns, type ExportTable } from "../export/schema.js";

/** The view of `table` over every partition of the export at `dir`. */
function viewSql(dir: string, table: ExportTable, format: ExportFormat, hasFiles: boolean): string {
  if (!hasFiles) {
    // No partition yet: an empty view with the same columns (read_parquet fails on no files).
    const cols = EXPORT_SCHEMA[table].map((c) => `CAST(NULL AS ${c.type}) AS ${c.name}`).join(", ");
    return `CREATE VIEW ${table} AS SELECT ${cols}, CAST(NULL AS VARCHAR) AS execution WHERE false`;
  }
  const glob = sqlString(path.join(dir, table, "*", format === "parquet" ? "*.parquet" : "*.ndjson"));
  const hive = "hive_partitioning = true, hive_types = {'execution': VARCHAR}";
  return format === "parquet"
    ? `CREATE VIEW ${table} AS SELECT * FROM read_parquet(${glob}, ${hive})`
    : `CREATE VIEW ${table} AS SELECT * FROM read_json(${glob}, format = 'newline_delimited', columns = ${duckdbColumns(table)}, maximum_object_size = 1073741824, ${hive})`;
}

/** The format of the export at `dir` (EXPORT_DIR_INVALID when it is not one). */
async function exportFormat(dir: string): Promise<ExportFormat> {
  let meta: { format?: unknown };
  try {
    meta = JSON.parse(await fsp.readFile(path.join(dir, EXPORT_META_FILE), "utf8")) as { format?: unknown };
  } catch (e) {
    throw new JournalError("EXPORT_DIR_INVALID", `${dir} is not an export: no readable ${EXPORT_META_FILE}`, { path: dir }, {
      hint: "name the directory `hankweave-journal export <root> -o <dir>` wrote", cause: e,
    });
  }
  if (meta.format !== "parquet" && meta.format !== "ndjson") {
    throw new JournalError("EXPORT_DIR_INVALID", `${path.join(dir, EXPORT_META_FILE)} names no known format`, { path: dir, actual: String(meta.format) });
  }
  return meta.format;
}

async function hasPartition(dir: string, table: ExportTable, format: ExportFormat): Promise<boolean> {
  let parts: string[];
  try {
    parts = await fsp.readdir(path.join(dir, table));
  } catch {
    return false;
  }
  for (const p of parts) {
    if (!p.startsWith("execution=")) continue;
    const st = await fsp.stat(path.join(dir, table, p, PARTITION_FILE[format])).catch(() => undefined);
    if (st?.isFile()) return true;
  }
  return false;
}

/** A DuckDB value as JSON-friendly JavaScript. */
function plain(v: unknown): unknown {
  if (typeof v === "bigint") return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v === null || v === undefined || typeof v !== "object") return v ?? null;
  if (v instanceof Uint8Array) return Buffer.from(v);
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(plain);
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, plain(x)]));
}

function invalid(message: string, dir: string, sql: string): JournalError {
  return new JournalError("QUERY_INVALID", message, { path: dir, actual: sql }, {
    hint: "one SELECT over runs, codon_attempts, transitions, events (see docs/fleet-export.md)",
  });
}

/**
 * Run `sql` over the export at `dir`, calling `onColumns` once and `onRow` per row (awaited).
 * Returns the row count. See the module comment for what is refused and bounded.
 * @example await streamFleetQuery("/exports/ci", "SELECT codon, sum(cost) FROM codon_attempts GROUP BY 1", (c) => …, (r) => …)
 */
export async function streamFleetQuery(
  dir: string,
  sql: string,
  onColumns: (columns: string[]) => void | Promise<void>,
  onRow: (row: unknown[]) => void | Promise<void>,
  limits: QueryLimits = {},
): Promise<number> {
  const real = await fsp.realpath(dir).catch((e: unknown) => {
    throw new JournalError("EXPORT_DIR_INVALID", `${dir} does not exist or cannot be read`, { path: dir }, { cause: e });
  });
  const format = await exportFormat(real);
  const { DuckDBInstance, StatementType } = duckdb();
  const maxRows = limits.maxRows ?? QUERY_MAX_ROWS;
  const timeoutMs = limits.timeoutMs ?? QUERY_TIMEOUT_MS;
  const instance = await DuckDBInstance.create(":memory:", { threads: "2" });
  const conn = await instance.connect();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (const t of EXPORT_TABLES) await conn.run(viewSql(real, t, format, await hasPartition(real, t, format)));
    await conn.run(`SET allowed_directories = [${sqlString(real + path.sep)}]`);
    await conn.run("SET enable_external_access = false");
    await conn.run("SET lock_configuration = true");
    let stmt;
    try {
      const extracted = await conn.extractStatements(sql);
      if (extracted.count !== 1) throw invalid(`exactly one statement is accepted (got ${extracted.count})`, real, sql);
      stmt = await extracted.prepare(0);
    } catch (e) {
      if (isJournalError(e)) throw e;
      throw invalid(`SQL does not compile: ${(e as Error).message.split("\n")[0]}`, real, sql);
    }
    if (stmt.statementType !== StatementType.SELECT) {
      throw invalid("only read-only statements that return rows (SELECT, WITH … SELECT) are accepted", real, sql);
    }
    const started = Date.now();
    timer = setTimeout(() => {
      timedOut = true;
      conn.interrupt();
    }, timeoutMs);
    const tooLong = (): JournalError => new JournalError("QUERY_TIMEOUT", `the query ran longer than ${timeoutMs} ms`, { path: real, actual: sql, expected: timeoutMs }, {
      hint: "narrow the query, or raise --timeout",
    });
    let n = 0;
    try {
      const result = await stmt.stream();
      await onColumns(result.columnNames());
      for await (const rows of result.yieldRowsJs()) {
        for (const r of rows) {
          if (n >= maxRows) {
            throw new JournalError("QUERY_TOO_LARGE", `the query returned more than ${maxRows} rows`, { path: real, actual: sql, expected: maxRows }, {
              hint: "add a LIMIT, or raise --max-rows",
            });
          }
          n += 1;
          await onRow(r.map(plain));
          if (Date.now() - started > timeoutMs) throw tooLong();
        }
      }
    } catch (e) {
      if (isJournalError(e)) throw e;
      if (timedOut) throw tooLong();
      const msg = (e as Error).message.split("\n")[0];
      if (/out of memory/i.test(msg)) throw new JournalError("QUERY_TOO_LARGE", `the query ran DuckDB out of memory: ${msg}`, { path: real, actual: sql }, { cause: e });
      throw invalid(`SQL failed: ${msg}`, real, sql);
    }
    return n;
  } finally {
    if (timer) clearTimeout(timer);
    conn.closeSync();
    instance.closeSync();
  }
}

/** Collect the rows of `sql` over the export at `dir` (bounded like `streamFleetQuery`). */
export async function fleetQuery(dir: string, sql: string, limits: QueryLimits = {}): Promise<{ columns: string[]; rows: unknown[][] }> {
  let columns: string[] = [];
  const rows: unknown[][] = [];
  await streamFleetQuery(dir, sql, (c) => void (columns = c), (r) => void rows.push(r), limits);
  return { columns, rows };
}
