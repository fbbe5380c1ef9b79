/**
 * `query`: read-only SQL over the index. The database is opened `readonly: true` and a statement
 * must both return rows (`stmt.reader`) and be read-only (`stmt.readonly`), so nothing a query
 * says can change the file.
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

/**
 * Run `sql` against the index of `exec` (build it first with `buildIndex`).
 *
 * Guarantees: throws JournalError `QUERY_INVALID` for SQL that does not compile or is not a
 * read-only row-returning statement, and `INDEX_STALE` when there is no index; the database file
 * is never written. Bound parameters may be given positionally.
 * @example queryIndex("/runs/x", "SELECT type, count(*) FROM events GROUP BY type").rows
 */
export function queryIndex(exec: string, sql: string, params: unknown[] = []): QueryResult {
  const path = layoutOf(exec).index;
  if (!existsSync(path)) {
    throw new JournalError("INDEX_STALE", `no index at ${path}`, { path }, { hint: "run `hankweave-journal index <exec>` first" });
  }
  const db = new (sqlite())(path, { readonly: true, fileMustExist: true });
  try {
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
    const columns = stmt.columns().map((c) => c.name);
    let rows: unknown[][];
    try {
      rows = stmt.raw(true).all(...params) as unknown[][];
    } catch (e) {
      throw new JournalError("QUERY_INVALID", `SQL failed: ${(e as Error).message}`, { path, actual: sql });
    }
    return { columns, rows };
  } finally {
    db.close();
  }
}
