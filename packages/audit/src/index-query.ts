/**
 * `query`: read-only SQL over the index. The database is opened `readonly: true` and a statement
 * must both return rows (`stmt.reader`) and be read-only (`stmt.readonly`), so nothing a query
 * says can change the file. `streamQuery` runs the statement in a child process (query.worker.ts)
 * that it kills at the timeout, with bounded memory, and streams the rows; `queryIndex` runs it
 * in this process and collects them (bounded in rows only).
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { workerEntryOf } from "@hankweave-journal/cas";
import { sqlite } from "./sqlite.js";
import { JournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { QueryFailure, prepareQuery, stepFailure, tooManyRows, type QueryFailureData } from "./query-rules.js";

/** The JournalError of a query failure (from this process or the child). */
function coded(f: QueryFailureData): JournalError {
  return new JournalError(f.code, f.message, f.details, { hint: f.hint });
}
import type { QueryMessage, QueryRequest } from "./query.worker.js";

/** Columns and rows (arrays, in column order) of a query. */
export interface QueryResult {
  columns: string[];
  rows: unknown[][];
}

/** Bounds of one query. */
export interface QueryLimits {
  /** More rows than this fail with QUERY_TOO_LARGE. Default `QUERY_MAX_ROWS`. */
  maxRows?: number;
  /** Wall time of the whole query (rows or none): past it the query process is killed, QUERY_TIMEOUT. Default `QUERY_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Memory of the query process in MiB (see `streamQuery`); past it, QUERY_TOO_LARGE. Default `QUERY_MAX_MEMORY_MB`. */
  maxMemoryMb?: number;
}

export const QUERY_MAX_ROWS = 1_000_000;
export const QUERY_TIMEOUT_MS = 60_000;
export const QUERY_MAX_MEMORY_MB = 2048;
/** Address space the Node runtime of the query process reserves before any query (measured ~0.9 GiB; tsx adds some). */
const RUNTIME_ADDRESS_SPACE_MB = 1536;
/** `prlimit` (util-linux) bounds the query process's address space, SQLite's allocations included. */
const PRLIMIT = ["/usr/bin/prlimit", "/bin/prlimit"].find((p) => existsSync(p));

/** Whether the query process's memory (SQLite's included) is bounded here, or only its JavaScript heap. */
export const QUERY_MEMORY_BOUNDS_SQLITE = PRLIMIT !== undefined;

/**
 * Start the query child: the built `query.worker.js` beside this module (dist/, the bundle), or
 * its `.ts` through the tsx boot script from the sources (`workerEntryOf`, as `startWorker` does).
 * With `prlimit` the child runs under `--as` (address space) and `--cpu` (a backstop should this
 * process die without killing it).
 */
function forkQueryChild(maxMemoryMb: number, timeoutMs: number): ChildProcess {
  const { start, source } = workerEntryOf(new URL("./query.worker.js", import.meta.url));
  // Without the trap handler V8 bounds-checks WebAssembly memory instead of reserving ~10 GiB of
  // address space per instance (tsx, from the sources, instantiates WebAssembly: under `--as` it fails).
  const node = [`--max-old-space-size=${maxMemoryMb}`, "--disable-wasm-trap-handler"];
  const args = source === undefined ? [] : [source.href];
  const stdio: ["ignore", "ignore", "pipe", "ipc"] = ["ignore", "ignore", "pipe", "ipc"];
  const env = { ...process.env, NODE_OPTIONS: "" };
  if (PRLIMIT === undefined) return fork(fileURLToPath(start), args, { execArgv: node, stdio, env, serialization: "advanced" });
  const as = (maxMemoryMb + RUNTIME_ADDRESS_SPACE_MB) * 1024 * 1024;
  const cpu = Math.ceil(timeoutMs / 1000) + 5;
  return fork(fileURLToPath(start), args, {
    execPath: PRLIMIT, execArgv: [`--as=${as}`, `--cpu=${cpu}`, "--", process.execPath, ...node], stdio, env, serialization: "advanced",
  });
}

function missingIndex(path: string): JournalError {
  return new JournalError("INDEX_STALE", `no index at ${path}`, { path }, { hint: "run `hankweave-journal index <exec>` first" });
}

/** A Uint8Array from the child (structured clone drops Buffer's class) as the Buffer better-sqlite3 gives. */
function asBuffers(row: unknown[]): unknown[] {
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[i] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
  return row;
}

/**
 * Run `sql` against the index of `exec`, calling `onColumns` once and then `onRow` per row (awaited:
 * output backpressure holds the query). Returns the row count.
 *
 * The statement runs in a child process (query.worker.ts) that streams rows in batches and waits
 * for each batch to be taken before it sends the next. Guarantees: QUERY_INVALID for SQL that does
 * not compile, is not read-only or fails; INDEX_STALE when there is no index; QUERY_TOO_LARGE past
 * `maxRows` rows, when SQLite runs out of memory or past its largest value, or when the child
 * dies of memory; QUERY_TIMEOUT when the query (rows or none: an aggregate over an endless
 * recursive CTE) runs longer than `timeoutMs` — the child is killed (SIGKILL) and the error says
 * how long it ran; WORKER_FAILED when the child dies otherwise. Memory: the child's JavaScript heap
 * is `maxMemoryMb` (`--max-old-space-size`) and, with `prlimit` (util-linux) present, its whole
 * address space (SQLite's allocations included) is `maxMemoryMb` plus what the Node runtime
 * reserves; without `prlimit` SQLite's own memory is bounded only by the time limit
 * (`QUERY_MEMORY_BOUNDS_SQLITE` says which). Temp tables and sorts spill to temp files.
 * @example await streamQuery("/runs/x", "SELECT type FROM events", (c) => …, (row) => …)
 */
export async function streamQuery(
  exec: ExecRef,
  sql: string,
  onColumns: (columns: string[]) => void | Promise<void>,
  onRow: (row: unknown[]) => void | Promise<void>,
  limits: QueryLimits = {},
  params: unknown[] = [],
): Promise<number> {
  const path = resolveExec(exec).index;
  if (!existsSync(path)) throw missingIndex(path);
  const maxRows = limits.maxRows ?? QUERY_MAX_ROWS;
  const timeoutMs = limits.timeoutMs ?? QUERY_TIMEOUT_MS;
  const maxMemoryMb = limits.maxMemoryMb ?? QUERY_MAX_MEMORY_MB;
  sqlite(); // NATIVE_MODULE_UNAVAILABLE here, before a child that would only die of it
  const started = Date.now();
  let child: ChildProcess;
  try {
    child = forkQueryChild(maxMemoryMb, timeoutMs);
  } catch (e) {
    throw new JournalError("WORKER_FAILED", `the query process could not start: ${(e as Error).message}`, { path }, { cause: e });
  }
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (d: string) => { stderr = (stderr + d).slice(-4096); });
  return await new Promise<number>((resolve, reject) => {
    let settled = false;
    let n = 0;
    const req: QueryRequest = { path, sql, params, maxRows };
    const finish = (err: unknown, rows = 0): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      if (err === undefined) resolve(rows);
      else reject(err);
    };
    const timer = setTimeout(() => {
      const ms = Date.now() - started;
      finish(new JournalError("QUERY_TIMEOUT", `the query ran longer than ${timeoutMs} ms (stopped after ${ms} ms)`, {
        path, actual: sql, expected: timeoutMs, elapsedMs: ms,
      }, { hint: "narrow the query, or raise --timeout" }));
    }, timeoutMs);
    // Messages are handled one at a time, in order; the next batch is asked for once a batch is taken.
    let chain = Promise.resolve();
    const handle = async (m: QueryMessage): Promise<void> => {
      if (settled) return;
      if (m.k === "ready") child.send(req, (err) => {
        if (err) finish(new JournalError("WORKER_FAILED", `the query process did not take the query: ${err.message}`, { path }, { cause: err }));
      });
      else if (m.k === "columns") await onColumns(m.columns);
      else if (m.k === "rows") {
        for (const row of m.rows) {
          if (settled) return;
          if (n >= maxRows) throw coded(tooManyRows(maxRows, path, sql).data);
          n += 1;
          await onRow(asBuffers(row));
        }
        if (!settled && child.connected) child.send({ k: "more" });
      } else if (m.k === "done") finish(undefined, n);
      else {
        finish(coded(m.error));
      }
    };
    child.on("message", (m: QueryMessage) => {
      chain = chain.then(() => handle(m)).catch((e: unknown) => finish(e));
    });
    child.on("error", (e) => finish(new JournalError("WORKER_FAILED", `the query process failed: ${e.message}`, { path }, { cause: e })));
    child.on("close", (code, signal) => {
      void chain.then(() => {
        const tail = stderr.trim().split("\n").slice(-3).join(" | ");
        if (/out of memory|allocation failed|heap limit|cannot allocate|ENOMEM/i.test(stderr)) {
          finish(new JournalError("QUERY_TOO_LARGE", `the query ran out of memory (limit ${maxMemoryMb} MiB)`, {
            path, actual: sql, expected: maxMemoryMb,
          }, { hint: "narrow the query (fewer or smaller rows), or raise --max-memory" }));
        } else {
          finish(new JournalError("WORKER_FAILED", `the query process ended without an answer (${signal ?? `exit ${code}`})${tail ? `: ${tail}` : ""}`, { path, actual: sql }));
        }
      });
    });
  });
}

/**
 * Run `sql` against the index of `exec` (build it first with `buildIndex`) and collect the rows
 * (bounded like `streamQuery`).
 *
 * Guarantees: throws JournalError `QUERY_INVALID` for SQL that does not compile or is not a
 * read-only row-returning statement, and `INDEX_STALE` when there is no index; the database file
 * is never written. Bound parameters may be given positionally. Runs in this process and is
 * bounded in rows only: a statement that runs long without rows is not stopped (use `streamQuery`,
 * which runs it in a child process with a time and memory bound, for SQL you did not write).
 * @example queryIndex("/runs/x", "SELECT type, count(*) FROM events GROUP BY type").rows
 */
export function queryIndex(exec: ExecRef, sql: string, params: unknown[] = [], limits: QueryLimits = {}): QueryResult {
  const path = resolveExec(exec).index;
  if (!existsSync(path)) throw missingIndex(path);
  const maxRows = limits.maxRows ?? QUERY_MAX_ROWS;
  const db = new (sqlite())(path, { readonly: true, fileMustExist: true });
  try {
    let stmt: ReturnType<typeof prepareQuery>;
    try {
      stmt = prepareQuery(db, sql, path);
    } catch (e) {
      throw e instanceof QueryFailure ? coded(e.data) : e;
    }
    const columns = stmt.columns().map((c) => c.name);
    const rows: unknown[][] = [];
    try {
      for (const row of stmt.raw(true).iterate(...params) as IterableIterator<unknown[]>) {
        if (rows.length >= maxRows) throw tooManyRows(maxRows, path, sql);
        rows.push(row);
      }
    } catch (e) {
      throw coded(stepFailure(e, path, sql).data);
    }
    return { columns, rows };
  } finally {
    db.close();
  }
}
