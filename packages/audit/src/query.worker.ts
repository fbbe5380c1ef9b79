/**
 * The child process of `streamQuery` (index-query.ts): runs one read-only statement against the
 * index and streams its rows to the parent over the IPC channel, in batches, each batch sent only
 * once the parent has taken the one before (so neither side holds more than two batches).
 *
 * A child process and not a worker thread: SQLite cannot be interrupted through better-sqlite3,
 * and a thread stuck inside a statement keeps its process alive; a child can be killed
 * (SIGKILL) at the query's timeout, and its memory bounded (`--max-old-space-size`, and
 * `prlimit --as` when present). Started by `forkQueryChild` with `workerEntryOf` (the `.js` beside
 * the caller in the built package and the bundle, the `.ts` through the tsx boot script from the
 * sources), the one way the repo starts worker modules.
 *
 * Protocol: child → parent `{k: "ready"}` once it listens (a message sent before is lost); parent →
 * child one `QueryRequest`, then `{k: "more"}` per batch taken; child → parent `{k: "columns"}`, `{k: "rows"}`…, then `{k: "done", rows}` or `{k: "error", error}` (a coded
 * error's JSON), and exits.
 */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { prepareQuery, stepFailure, tooManyRows, type QueryFailureData } from "./query-rules.js";

// Loaded plainly: the parent has loaded it through `sqlite()` (NATIVE_MODULE_UNAVAILABLE there)
// before starting this child, and nothing of the workspace is imported here but the rules (a
// child from the sources starts in a fraction of the time without core's schemas).
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;

/** What the parent asks. */
export interface QueryRequest {
  path: string;
  sql: string;
  params: unknown[];
  maxRows: number;
}

/** What the child answers. */
export type QueryMessage =
  | { k: "ready" }
  | { k: "columns"; columns: string[] }
  | { k: "rows"; rows: unknown[][] }
  | { k: "done"; rows: number }
  | { k: "error"; error: QueryFailureData };

/** A batch is sent at this many rows, this many bytes (estimated) or this age, whichever first. */
const BATCH_ROWS = 512;
const BATCH_BYTES = 1 << 20;
const BATCH_MS = 50;

function sizeOf(row: unknown[]): number {
  let n = 16;
  for (const v of row) n += typeof v === "string" ? v.length : v instanceof Uint8Array ? v.byteLength : 8;
  return n;
}

function send(m: QueryMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve()));
  });
}

let acked: (() => void) | undefined;
process.on("message", (m: { k?: string }) => {
  if (m.k === "more" && acked) {
    const a = acked;
    acked = undefined;
    a();
  }
});
// The parent is gone: nobody reads the rows.
process.on("disconnect", () => process.exit(0));

async function run(req: QueryRequest): Promise<void> {
  const db = new Sqlite(req.path, { readonly: true, fileMustExist: true });
  const stmt = prepareQuery(db, req.sql, req.path);
  await send({ k: "columns", columns: stmt.columns().map((c) => c.name) });
  let pending: Promise<void> | undefined; // the ack of the batch in flight
  let batch: unknown[][] = [];
  let bytes = 0;
  let since = 0;
  const flush = async (): Promise<void> => {
    if (pending) await pending;
    pending = new Promise((resolve) => { acked = resolve; });
    await send({ k: "rows", rows: batch });
    batch = [];
    bytes = 0;
  };
  let n = 0;
  try {
    for (const row of stmt.raw(true).iterate(...req.params) as IterableIterator<unknown[]>) {
      if (n >= req.maxRows) {
        // The rows within the bound reach the parent before the error does.
        if (batch.length > 0) await flush();
        if (pending) await pending;
        throw tooManyRows(req.maxRows, req.path, req.sql);
      }
      n += 1;
      if (batch.length === 0) since = Date.now();
      batch.push(row);
      bytes += sizeOf(row);
      if (batch.length >= BATCH_ROWS || bytes >= BATCH_BYTES || Date.now() - since >= BATCH_MS) await flush();
    }
  } catch (e) {
    throw stepFailure(e, req.path, req.sql);
  }
  if (batch.length > 0) await flush();
  if (pending) await pending;
  await send({ k: "done", rows: n });
}

process.once("message", (req: QueryRequest) => {
  run(req).catch(async (e: unknown) => {
    await send({ k: "error", error: stepFailure(e, req.path, req.sql).data }).catch(() => undefined);
  }).finally(() => process.exit(0));
});
void send({ k: "ready" });
