/**
 * The worker thread of `IndexWorker` (index-worker.ts): classifies chunks of journal lines ahead of
 * the fold (`scan`) and, for the index, owns the temp database and runs the INSERTs, the COMMIT and
 * the secondary indexes. Started by `startWorker(new URL("./index-db.worker.js", import.meta.url))`
 * from the sources and the built package alike; it imports the envelope check, the row layout and
 * the schema instead of receiving them as strings. One thread serves one database at a time
 * (`open` … `finish`) and may serve several in turn (IndexWorker reuses idle threads).
 */
import { isUtf8 } from "node:buffer";
import { createRequire } from "node:module";
import { parentPort } from "node:worker_threads";
import type BetterSqlite3 from "better-sqlite3";
import { envelopeProblem, isBlankLine } from "@hankweave-journal/journal";
import { ATTEMPT_COLS, EVENT_COLS, FINDING_COLS, INSERT_SQL, RUN_COLS, TRANSITION_COLS } from "./index-rows.js";
import { SCHEMA_INDEXES_SQL, SCHEMA_TABLES_SQL } from "./index-schema.js";

/** The database of an `open` request. */
export interface IndexThreadDatabase {
  /** The temp database file (created, or a copy of the previous index). */
  path: string;
  /** Full build: create the tables first and the secondary indexes after the COMMIT. */
  full: boolean;
  /** Incremental build: delete TORN_TAIL findings first (the fragment is read again). */
  dropTornTail: boolean;
}

/** A chunk of complete lines to classify (`IndexWorker.scan`). */
export interface ScanRequest {
  kind: "scan";
  seq: number;
  buffer: SharedArrayBuffer;
  byteOffset: number;
  length: number;
  lines: number;
  /** 0 nobody yet, 1 the worker, 2 the main thread (Atomics.compareExchange). */
  claim: Int32Array;
}

/** The other messages, each acknowledged by `{ok: kind}` or answered by `{error}`. */
export type DatabaseRequest =
  | { kind: "open"; db: IndexThreadDatabase }
  | { kind: "rows"; events: unknown[]; transitions: unknown[]; findings: unknown[] }
  | { kind: "finish"; runs: unknown[]; attempts: unknown[]; meta: unknown[] };

/** What the worker posts back. */
export type IndexThreadReply =
  | { ok: "scan"; seq: number; kinds: Uint8Array | null; strs: (string | null)[] | null; error?: undefined }
  | { ok: DatabaseRequest["kind"]; error?: undefined }
  | { error: string; code?: string; ok?: undefined };

/** Rows per multi-row INSERT statement (fewer statement executions; same rows in the same order). */
const MULTI_ROWS = 32;
/** A line whose first bytes hold `"type":"state.transition"` is left to the main thread unparsed. */
const SNIFF_BYTES = 256;
const TRANSITION = Buffer.from('"type":"state.transition"');

/** `INSERT_SQL[k]` with MULTI_ROWS value tuples. */
const MULTI_SQL: Record<string, string> = Object.fromEntries(Object.entries(INSERT_SQL).map(([k, sql]) => {
  const at = sql.lastIndexOf("(");
  const tuple = sql.slice(at);
  return [k, sql.slice(0, at) + Array.from({ length: MULTI_ROWS }, () => tuple).join(",")];
}));

/**
 * 0 blank, 1 a valid envelope that is not a `state.transition` (its id, timestamp, type and codon
 * pushed to `strs`), 2 anything else (the main thread parses it with `parseEventLine`).
 */
function classifyLine(buf: Buffer, s: number, e: number, strs: (string | null)[]): 0 | 1 | 2 {
  const line = buf.subarray(s, e);
  if (isBlankLine(line)) return 0;
  if (!isUtf8(line)) return 2;
  if ((e - s > SNIFF_BYTES ? buf.subarray(s, s + SNIFF_BYTES) : line).indexOf(TRANSITION) >= 0) return 2;
  let v: unknown;
  try {
    v = JSON.parse(line.toString("utf8"));
  } catch {
    return 2;
  }
  if (envelopeProblem(v) !== undefined) return 2;
  const o = v as { id: string; timestamp: string; type: string; data: unknown };
  if (o.type === "state.transition") return 2;
  const d = o.data as { codonId?: unknown } | null;
  strs.push(o.id, o.timestamp, o.type, d !== null && typeof d === "object" && typeof d.codonId === "string" ? d.codonId : null);
  return 1;
}

type Statement = BetterSqlite3.Statement<unknown[]>;

/** Insert rows of `cols` values from the flat array `values`: `multi` (MULTI_ROWS rows per statement) while it fits, then `one`. */
function insertFlat(one: Statement, multi: Statement, values: unknown[], cols: number): void {
  let i = 0;
  const per = MULTI_ROWS * cols;
  if (values.length >= per) {
    const params = new Array<unknown>(per);
    for (; i + per <= values.length; i += per) {
      for (let k = 0; k < per; k++) params[k] = values[i + k];
      multi.run(params);
    }
  }
  if (i < values.length) {
    const row = new Array<unknown>(cols);
    for (; i < values.length; i += cols) {
      for (let k = 0; k < cols; k++) row[k] = values[i + k];
      one.run(row);
    }
  }
}

function startThread(port: NonNullable<typeof parentPort>): void {
  // Loaded at the first `open`: a scan-only worker (audit) does not pay for the native module. The
  // main thread checked that it loads (NATIVE_MODULE_UNAVAILABLE) before asking.
  let Database: typeof BetterSqlite3 | undefined;
  let w: IndexThreadDatabase | undefined;
  let db: BetterSqlite3.Database | undefined;
  const st: Record<string, Statement> = {};
  const stmt = (k: string): Statement => st[k]!;

  const scan = (m: ScanRequest): void => {
    if (Atomics.compareExchange(m.claim, 0, 0, 1) !== 0) {
      port.postMessage({ ok: "scan", seq: m.seq, kinds: null, strs: null } satisfies IndexThreadReply);
      return;
    }
    const buf = Buffer.from(m.buffer, m.byteOffset, m.length);
    const kinds = new Uint8Array(m.lines);
    const strs: (string | null)[] = [];
    let i = 0;
    for (let from = 0; from < m.length; i++) {
      const nl = buf.indexOf(10, from);
      kinds[i] = classifyLine(buf, from, nl, strs);
      from = nl + 1;
    }
    port.postMessage({ ok: "scan", seq: m.seq, kinds, strs } satisfies IndexThreadReply, [kinds.buffer]);
  };

  const handle = (m: DatabaseRequest): void => {
    if (m.kind === "open") {
      if (db !== undefined) throw new Error("index worker: open while a database is open");
      Database ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
      w = m.db;
      db = new Database(w.path);
      db.pragma("journal_mode = OFF");
      db.pragma("synchronous = OFF");
      db.pragma("cache_size = -65536");
      db.pragma("locking_mode = EXCLUSIVE");
      db.pragma("temp_store = MEMORY");
      if (w.full) db.exec(SCHEMA_TABLES_SQL);
      if (w.dropTornTail) db.prepare("DELETE FROM findings WHERE code = 'TORN_TAIL'").run();
      for (const [k, sql] of Object.entries(INSERT_SQL)) st[k] = db.prepare(sql);
      for (const [k, sql] of Object.entries(MULTI_SQL)) st[`${k}Multi`] = db.prepare(sql);
      db.exec("BEGIN");
      return;
    }
    if (db === undefined || w === undefined) throw new Error(`index worker: ${m.kind} before open`);
    if (m.kind === "rows") {
      insertFlat(stmt("event"), stmt("eventMulti"), m.events, EVENT_COLS);
      insertFlat(stmt("transition"), stmt("transitionMulti"), m.transitions, TRANSITION_COLS);
      insertFlat(stmt("finding"), stmt("findingMulti"), m.findings, FINDING_COLS);
      return;
    }
    db.exec("DELETE FROM runs; DELETE FROM codon_attempts;");
    insertFlat(stmt("run"), stmt("runMulti"), m.runs, RUN_COLS);
    insertFlat(stmt("attempt"), stmt("attemptMulti"), m.attempts, ATTEMPT_COLS);
    insertFlat(stmt("meta"), stmt("metaMulti"), m.meta, 2);
    db.exec("COMMIT");
    if (w.full) db.exec(SCHEMA_INDEXES_SQL);
    db.close();
    db = undefined;
  };

  port.on("message", (m: ScanRequest | DatabaseRequest) => {
    try {
      if (m.kind === "scan") return scan(m);
      handle(m);
      port.postMessage({ ok: m.kind } satisfies IndexThreadReply);
    } catch (e) {
      try {
        if (db?.open) db.close();
      } catch {
        // the error being reported matters more than a failed close
      }
      // The errno / SQLite code crosses the thread boundary so the user gets NO_SPACE, not "internal error".
      const code = (e as { code?: unknown })?.code;
      port.postMessage({ error: String((e as Error)?.message ?? e), ...(typeof code === "string" ? { code } : {}) } satisfies IndexThreadReply);
    }
  });
}

if (parentPort !== null) startThread(parentPort);
