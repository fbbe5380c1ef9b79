/**
 * The statement rules of `query`, shared by the in-process `queryIndex` and the query child
 * (query.worker.ts): a statement must compile, return rows and be read-only; SQLite's failures map
 * to stable codes.
 */
import type Database from "better-sqlite3";
import { JournalError } from "@hankweave-journal/core";

/** Prepare `sql`; QUERY_INVALID when it does not compile or is not a read-only, row-returning statement. */
export function prepareQuery(db: Database.Database, sql: string, path: string): Database.Statement {
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

/** QUERY_TOO_LARGE for more than `maxRows` rows. */
export function tooManyRows(maxRows: number, path: string, sql: string): JournalError {
  return new JournalError("QUERY_TOO_LARGE", `the query returned more than ${maxRows} rows`, { path, actual: sql, expected: maxRows }, {
    hint: "add a LIMIT, or raise --max-rows",
  });
}

/** Whether `e` says memory ran out (SQLite's NOMEM/TOOBIG, V8's allocation failures, the OS's ENOMEM). */
export function isOutOfMemory(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  const message = e instanceof Error ? e.message : String(e);
  return code === "SQLITE_NOMEM" || code === "SQLITE_TOOBIG" || code === "ENOMEM" || e instanceof RangeError
    || /out of memory|allocation failed|cannot allocate|too big/i.test(message);
}

/** The coded error for a failure of SQLite (or of memory) while stepping a statement. */
export function stepError(e: unknown, path: string, sql: string): JournalError {
  if (e instanceof JournalError) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (isOutOfMemory(e)) {
    return new JournalError("QUERY_TOO_LARGE", `the query ran out of memory or past SQLite's largest value: ${message}`, { path, actual: sql }, {
      hint: "narrow the query (fewer or smaller rows), or raise --max-memory",
    });
  }
  return new JournalError("QUERY_INVALID", `SQL failed: ${message}`, { path, actual: sql });
}
