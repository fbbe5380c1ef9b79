/**
 * `query`: read-only SQL over the index. The database is opened `readonly: true` and a statement
 * must both return rows (`stmt.reader`) and be read-only (`stmt.readonly`), so nothing a query
 * says can change the file. Rows are streamed (`iterate`), never all collected, and bounded.
 */
import { existsSync } from "node:fs";
import type Database from "better-sqlite3";
import { sqlite } from "./sqlite.js";
import { JournalError, layoutOf } from "@hankweave-journal/core";

/** Columns and rows (arrays, in column order) of a query. */
export interface QueryResult {
  columns: string[];
  rows: unknown[][];
}

/** Bounds of one query. */
export interface QueryLimits {
  /** More rows than this fail with QUERY_TOO_LARGE. Default `QUERY_MAX_ROWS`. */
  maxRows?: number;
  /** Checked between rows: a query still producing rows after this fails with QUERY_TIMEOUT. Default `QUERY_TIMEOUT_MS`. */
  timeoutMs?: number;
}

export const QUERY_MAX_ROWS = 1_000_000;
export const QUERY_TIMEOUT_MS = 60_000;

function prepare(db: Database.Database, sql: string, path: string): Database.Statement {
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(sql);
  } catch (e) {
    throw new JournalError("QUERY_INVALID", `SQL does not compile: ${(e as Error).message}`, { path, actual: sql }, {
      hint: "see docs/audit.md for the schema; only SELECT statements are accepted",
    });
  }
  if (!stmt.reader || !stmt.readonly) {
    throw new JournalError("QUERY_INVALID", "only read-only statements that return rows (SELECT, WITH … SELECT) are accepted", {
      path, actual: sql,
    });
  }
  return stmt;
}

/**
 * Run `sql` against the index of `exec`, calling `onColumns` once and then `onRow` per row (awaited:
 * output backpressure holds the query). Returns the row count.
 *
 * Guarantees: QUERY_INVALID for SQL that does not compile, is not read-only or fails; INDEX_STALE
 * when there is no index; QUERY_TOO_LARGE past `maxRows` rows or SQLite's heap bound;
 * QUERY_TIMEOUT past `timeoutMs` between rows. Memory stays bounded by one row in JavaScript plus
 * SQLite's own: its page caches (temp tables and sorts spill to files), and one value of at most
 * SQLITE_MAX_LENGTH (1e9 bytes: SQLITE_TOOBIG → QUERY_TOO_LARGE). A heap limit is not available
 * (better-sqlite3 is built with SQLITE_DEFAULT_MEMSTATUS=0, so `PRAGMA hard_heap_limit` is inert). Does not bound a statement that runs long without producing a row (an aggregate
 * over an endless recursive CTE): better-sqlite3 exposes no sqlite3_interrupt, and a worker stuck
 * in SQLite cannot be stopped (node waits for it at exit).
 * @example await streamQuery("/runs/x", "SELECT type FROM events", (c) => …, (row) => …)
 */
export async function streamQuery(
  exec: string,
  sql: string,
  onColumns: (columns: string[]) => void | Promise<void>,
  onRow: (row: unknown[]) => void | Promise<void>,
  limits: QueryLimits = {},
  params: unknown[] = [],
): Promise<number> {
  const path = layoutOf(exec).index;
  if (!existsSync(path)) {
    throw new JournalError("INDEX_STALE", `no index at ${path}`, { path }, { hint: "run `hankweave-journal index <exec>` first" });
  }
  const maxRows = limits.maxRows ?? QUERY_MAX_ROWS;
  const timeoutMs = limits.timeoutMs ?? QUERY_TIMEOUT_MS;
  const db = new (sqlite())(path, { readonly: true, fileMustExist: true });
  try {
    const stmt = prepare(db, sql, path);
    await onColumns(stmt.columns().map((c) => c.name));
    const started = Date.now();
    let n = 0;
    try {
      for (const row of stmt.raw(true).iterate(...params) as IterableIterator<unknown[]>) {
        if (n >= maxRows) {
          throw new JournalError("QUERY_TOO_LARGE", `the query returned more than ${maxRows} rows`, { path, actual: sql, expected: maxRows }, {
            hint: "add a LIMIT, or raise --max-rows",
          });
        }
        n += 1;
        await onRow(row);
        if (Date.now() - started > timeoutMs) {
          throw new JournalError("QUERY_TIMEOUT", `the query ran longer than ${timeoutMs} ms`, { path, actual: sql, expected: timeoutMs }, {
            hint: "narrow the query, or raise --timeout",
          });
        }
      }
    } catch (e) {
      if (e instanceof JournalError) throw e;
      const code = (e as { code?: string }).code;
      if (code === "SQLITE_NOMEM" || code === "SQLITE_TOOBIG" || /out of memory/i.test((e as Error).message)) {
        throw new JournalError("QUERY_TOO_LARGE", `the query ran SQLite out of memory or past its largest value: ${(e as Error).message}`, { path, actual: sql }, { cause: e });
      }
      throw new JournalError("QUERY_INVALID", `SQL failed: ${(e as Error).message}`, { path, actual: sql });
    }
    return n;
  } finally {
    db.close();
  }
}

/**
 * Run `sql` against the index of `exec` (build it first with `buildIndex`) and collect the rows
 * (bounded like `streamQuery`).
 *
 * Guarantees: throws JournalError `QUERY_INVALID` for SQL that does not compile or is not a
 * read-only row-returning statement, and `INDEX_STALE` when there is no index; the database file
 * is never written. Bound parameters may be given positionally.
 * @example queryIndex("/runs/x", "SELECT type, count(*) FROM events GROUP BY type").rows
 */
export function queryIndex(exec: string, sql: string, params: unknown[] = [], limits: QueryLimits = {}): QueryResult {
  const path = layoutOf(exec).index;
  if (!existsSync(path)) {
    throw new JournalError("INDEX_STALE", `no index at ${path}`, { path }, { hint: "run `hankweave-journal index <exec>` first" });
  }
  const maxRows = limits.maxRows ?? QUERY_MAX_ROWS;
  const db = new (sqlite())(path, { readonly: true, fileMustExist: true });
  try {
    const stmt = prepare(db, sql, path);
    const columns = stmt.columns().map((c) => c.name);
    const rows: unknown[][] = [];
    try {
      for (const row of stmt.raw(true).iterate(...params) as IterableIterator<unknown[]>) {
        if (rows.length >= maxRows) throw new JournalError("QUERY_TOO_LARGE", `the query returned more than ${maxRows} rows`, { path, actual: sql, expected: maxRows });
        rows.push(row);
      }
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError("QUERY_INVALID", `SQL failed: ${(e as Error).message}`, { path, actual: sql });
    }
    return { columns, rows };
  } finally {
    db.close();
  }
}
