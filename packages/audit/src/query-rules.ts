/**
 * The statement rules of `query`, shared by the in-process `queryIndex` and the query child
 * (query.worker.ts): a statement must compile, return rows and be read-only; SQLite's failures map
 * to stable codes. Imports nothing of the workspace (the child starts faster without core's
 * schemas): failures are `QueryFailure`s, which index-query.ts turns into JournalErrors.
 */
import type Database from "better-sqlite3";

/** A coded query failure, as plain data (it crosses the child's IPC channel). */
export interface QueryFailureData {
  code: "QUERY_INVALID" | "QUERY_TOO_LARGE";
  message: string;
  details: { path: string; actual: string; expected?: number };
  hint?: string;
}

/** Thrown by the rules below; carries `QueryFailureData`. */
export class QueryFailure extends Error {
  constructor(readonly data: QueryFailureData) {
    super(data.message);
  }
}

/** Prepare `sql`; QUERY_INVALID when it does not compile or is not a read-only, row-returning statement. */
export function prepareQuery(db: Database.Database, sql: string, path: string): Database.Statement {
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(sql);
  } catch (e) {
    throw new QueryFailure({
      code: "QUERY_INVALID", message: `SQL does not compile: ${(e as Error).message}`, details: { path, actual: sql },
      hint: "see docs/audit.md for the schema; only SELECT statements are accepted",
    });
  }
  if (!stmt.reader || !stmt.readonly) {
    throw new QueryFailure({
      code: "QUERY_INVALID", message: "only read-only statements that return rows (SELECT, WITH … SELECT) are accepted", details: { path, actual: sql },
    });
  }
  return stmt;
}

/** QUERY_TOO_LARGE for more than `maxRows` rows. */
export function tooManyRows(maxRows: number, path: string, sql: string): QueryFailure {
  return new QueryFailure({
    code: "QUERY_TOO_LARGE", message: `the query returned more than ${maxRows} rows`, details: { path, actual: sql, expected: maxRows },
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

/** The coded failure for an error of SQLite (or of memory) while opening or stepping a statement. */
export function stepFailure(e: unknown, path: string, sql: string): QueryFailure {
  if (e instanceof QueryFailure) return e;
  const message = e instanceof Error ? e.message : String(e);
  if (isOutOfMemory(e)) {
    return new QueryFailure({
      code: "QUERY_TOO_LARGE", message: `the query ran out of memory or past SQLite's largest value: ${message}`, details: { path, actual: sql },
      hint: "narrow the query (fewer or smaller rows), or raise --max-memory",
    });
  }
  return new QueryFailure({ code: "QUERY_INVALID", message: `SQL failed: ${message}`, details: { path, actual: sql } });
}
