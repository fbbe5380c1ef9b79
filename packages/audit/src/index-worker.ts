/**
 * The second thread of `index` and `audit`. It parses journal chunks ahead of the fold
 * (`scan`, see parse-ahead.ts) and, for the index, owns the temp database: the main thread folds
 * and hands the rows over in flat batches (one array per table, a fixed number of values per row,
 * in insertion order); the worker runs the prepared INSERTs (multi-row statements), then the
 * runs/attempts/meta rows, the COMMIT and the secondary indexes.
 *
 * Why: parsing, folding and inserting each cost about a third of a build and better-sqlite3 is
 * synchronous, so on one thread they add up; on two they overlap. The values and their order are
 * exactly what `IndexWriter`'s sink binds (the single-thread reference; a test compares the
 * tables of both, storage classes included).
 *
 * The worker is an inline CommonJS script (`eval: true`) that loads better-sqlite3 by its resolved
 * path, so it runs the same under tsx, vitest, the CLI bundle and plain node. Memory stays bounded:
 * at most `MAX_IN_FLIGHT` batches wait for the worker.
 */
import { createRequire } from "node:module";
import { sqlite } from "./sqlite.js";
import { Worker } from "node:worker_threads";
import type { AuditSink } from "./audit-types.js";
import { META_KEYS, type IndexMeta } from "./index-meta.js";
import type { RunSummary } from "./audit-types.js";
import { ATTEMPT_COLS, EVENT_COLS, FINDING_COLS, INSERT_SQL, RUN_COLS, TRANSITION_COLS, pushEventRow, pushFindingRow, pushRunRows, pushTransitionRow } from "./index-rows.js";
import { SCHEMA_INDEXES_SQL, SCHEMA_TABLES_SQL } from "./index-schema.js";
import type { SharedChunk } from "./shared-chunks.js";

/** The worker's classification of a chunk's lines (see `IndexWorker.scan`); null when the main thread claimed the chunk first. */
export type ChunkScan = { kinds: Uint8Array; strs: (string | null)[] } | { kinds: null; strs: null };

/** Rows per multi-row INSERT statement (fewer statement executions; same rows in the same order). */
const MULTI_ROWS = 32;
/** Batches posted but not yet inserted before `flush` waits. */
const MAX_IN_FLIGHT = 4;
/** A line whose first bytes hold `"type":"state.transition"` is left to the main thread unparsed. */
const SNIFF_BYTES = 256;

const SQL: Record<string, string> = INSERT_SQL;

/** `SQL[k]` with MULTI_ROWS value tuples. */
const MULTI_SQL = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => {
  const at = sql.lastIndexOf("(");
  const tuple = sql.slice(at);
  return [k, sql.slice(0, at) + Array.from({ length: MULTI_ROWS }, () => tuple).join(",")];
}));

const WORKER_SOURCE = `
const { parentPort, workerData: w } = require("node:worker_threads");
const { isUtf8 } = require("node:buffer");
const Database = w.path === "" ? null : require(w.lib);
let db;
const st = {};
const TRANSITION = Buffer.from('"type":"state.transition"');
/** 0 blank, 1 a valid non-transition envelope (its 4 strings pushed), 2 anything else (the main thread parses it). */
function classify(buf, s, e, strs) {
  let blank = true;
  for (let i = s; i < e; i++) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) { blank = false; break; }
  }
  if (blank) return 0;
  const line = buf.subarray(s, e);
  if (!isUtf8(line)) return 2;
  if ((e - s > ${SNIFF_BYTES} ? buf.subarray(s, s + ${SNIFF_BYTES}) : line).indexOf(TRANSITION) >= 0) return 2;
  let v;
  try {
    v = JSON.parse(line.toString("utf8"));
  } catch {
    return 2;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return 2;
  if (typeof v.id !== "string" || typeof v.timestamp !== "string" || typeof v.type !== "string" || !("data" in v)) return 2;
  if (v.type === "state.transition") return 2;
  const d = v.data;
  strs.push(v.id, v.timestamp, v.type, d !== null && typeof d === "object" && typeof d.codonId === "string" ? d.codonId : null);
  return 1;
}
function scan(m) {
  if (Atomics.compareExchange(m.claim, 0, 0, 1) !== 0) {
    parentPort.postMessage({ ok: "scan", seq: m.seq, kinds: null, strs: null });
    return;
  }
  const buf = Buffer.from(m.buffer, 0, m.length);
  const kinds = new Uint8Array(m.lines);
  const strs = [];
  let i = 0;
  for (let from = 0; from < m.length; i++) {
    const nl = buf.indexOf(10, from);
    kinds[i] = classify(buf, from, nl, strs);
    from = nl + 1;
  }
  parentPort.postMessage({ ok: "scan", seq: m.seq, kinds, strs }, [kinds.buffer]);
}
/** Insert rows of \`cols\` values from the flat array \`values\`: \`multi\` (${MULTI_ROWS} rows per statement) while it fits, then \`one\`. */
function insertFlat(one, multi, values, cols) {
  let i = 0;
  const per = ${MULTI_ROWS} * cols;
  if (values.length >= per) {
    const params = new Array(per);
    for (; i + per <= values.length; i += per) {
      for (let k = 0; k < per; k++) params[k] = values[i + k];
      multi.run(params);
    }
  }
  if (i < values.length) {
    const row = new Array(cols);
    for (; i < values.length; i += cols) {
      for (let k = 0; k < cols; k++) row[k] = values[i + k];
      one.run(row);
    }
  }
}
function handle(m) {
  if (m.kind === "open") {
    db = new Database(w.path);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    db.pragma("cache_size = -65536");
    db.pragma("locking_mode = EXCLUSIVE");
    db.pragma("temp_store = MEMORY");
    if (w.createTables) db.exec(w.tablesSql);
    if (w.dropTornTail) db.prepare("DELETE FROM findings WHERE code = 'TORN_TAIL'").run();
    for (const k of Object.keys(w.sql)) st[k] = db.prepare(w.sql[k]);
    for (const k of Object.keys(w.multiSql)) st[k + "Multi"] = db.prepare(w.multiSql[k]);
    db.exec("BEGIN");
    return;
  }
  if (m.kind === "rows") {
    insertFlat(st.event, st.eventMulti, m.events, ${EVENT_COLS});
    insertFlat(st.transition, st.transitionMulti, m.transitions, ${TRANSITION_COLS});
    insertFlat(st.finding, st.findingMulti, m.findings, ${FINDING_COLS});
    return;
  }
  if (m.kind === "finish") {
    db.exec("DELETE FROM runs; DELETE FROM codon_attempts;");
    insertFlat(st.run, st.runMulti, m.runs, ${RUN_COLS});
    insertFlat(st.attempt, st.attemptMulti, m.attempts, ${ATTEMPT_COLS});
    insertFlat(st.meta, st.metaMulti, m.meta, 2);
    db.exec("COMMIT");
    if (w.createIndexes) db.exec(w.indexesSql);
    db.close();
    db = undefined;
  }
}
parentPort.on("message", (m) => {
  try {
    if (m.kind === "scan") return scan(m);
    handle(m);
    parentPort.postMessage({ ok: m.kind });
  } catch (e) {
    try { if (db && db.open) db.close(); } catch {}
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});
`;

/** The database an `IndexWorker` writes. */
export interface IndexWorkerDatabase {
  /** The temp database file (created, or a copy of the previous index). */
  path: string;
  /** Full build: create the tables first and the secondary indexes after the COMMIT. */
  full: boolean;
  /** Incremental build: delete TORN_TAIL findings first (the fragment is read again). */
  dropTornTail: boolean;
}

/**
 * A worker thread that parses chunks ahead (`scan`) and, given a database, writes the index tables
 * (see the module comment). Use: `sink()` for the fold, `flush()` between read chunks, `finish()`
 * once; `terminate()` on failure (and, without a database, when done).
 */
export class IndexWorker {
  /** Findings handed to the worker. */
  findingsWritten = 0;
  private readonly worker: Worker;
  private events: unknown[] = [];
  private transitions: unknown[] = [];
  private findings: unknown[] = [];
  private inFlight = 0;
  private failure: Error | null = null;
  private readonly waiters: { resolve(): void; reject(e: Error): void }[] = [];
  private readonly scans = new Map<number, { resolve(r: ChunkScan): void; reject(e: Error): void }>();
  private nextSeq = 0;
  private ended = false;

  constructor(db: IndexWorkerDatabase | null) {
    const opts = db ?? { path: "", full: false, dropTornTail: false };
    // The worker loads better-sqlite3 by path only when it writes a database: say clearly (here,
    // NATIVE_MODULE_UNAVAILABLE) when it cannot, rather than let the worker die on the require.
    let lib = "";
    if (db !== null) {
      sqlite();
      lib = createRequire(import.meta.url).resolve("better-sqlite3");
    }
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // A plain CommonJS script: no loader hooks (under tsx they cost the worker ~0.3 CPU s to start).
      execArgv: [],
      workerData: {
        lib, path: opts.path, createTables: opts.full, createIndexes: opts.full, dropTornTail: opts.dropTornTail,
        tablesSql: SCHEMA_TABLES_SQL, indexesSql: SCHEMA_INDEXES_SQL, sql: SQL, multiSql: MULTI_SQL,
      },
    });
    this.worker.on("message", (m: { ok?: string; error?: string; seq?: number; kinds?: Uint8Array; strs?: (string | null)[] }) => {
      if (m.error !== undefined) this.fail(new Error(`index worker: ${m.error}`));
      else if (m.ok === "scan") {
        const s = this.scans.get(m.seq as number);
        this.scans.delete(m.seq as number);
        s?.resolve(m.kinds ? { kinds: m.kinds, strs: m.strs as (string | null)[] } : { kinds: null, strs: null });
      } else this.settle();
    });
    this.worker.on("error", (e) => this.fail(e));
    this.worker.on("exit", (code) => {
      if (!this.ended) this.fail(new Error(`index worker exited with code ${code}`));
    });
    if (db !== null) this.post({ kind: "open" });
  }

  /** The sink to give the audit fold: the same values as `IndexWriter.sink()`, queued. */
  sink(): AuditSink {
    return {
      event: (e) => pushEventRow(this.events, e),
      row: (r) => pushTransitionRow(this.transitions, r),
      finding: (f) => {
        this.findingsWritten += 1;
        pushFindingRow(this.findings, f);
      },
    };
  }

  /**
   * Classify the lines of `chunk` in the worker: per line 0 (blank), 1 (a valid envelope that is
   * not a `state.transition`; its id, timestamp, type and codon are the next four `strs`) or 2
   * (anything else: parse it with `parseEventLine`). Runs after the rows posted before it. The
   * worker first claims the chunk (`chunk.claim` 0 → 1); when the main thread claimed it already
   * (0 → 2: it got there first and parses the chunk itself), the result is `{kinds: null}`.
   */
  scan(chunk: SharedChunk): Promise<ChunkScan> {
    this.throwIfFailed();
    const seq = this.nextSeq++;
    const p = new Promise<ChunkScan>((resolve, reject) => this.scans.set(seq, { resolve, reject }));
    p.catch(() => undefined); // a read-ahead scan may be abandoned after a failure
    this.worker.postMessage({ kind: "scan", seq, buffer: chunk.buffer, length: chunk.length, lines: chunk.lines, claim: chunk.claim });
    return p;
  }

  /** Messages (row batches, open, finish) the worker has not finished yet. */
  get backlog(): number {
    return this.inFlight;
  }

  /** Hand the queued rows to the worker; waits while too many batches are pending. */
  async flush(): Promise<void> {
    this.throwIfFailed();
    if (this.events.length > 0 || this.transitions.length > 0 || this.findings.length > 0) {
      this.post({ kind: "rows", events: this.events, transitions: this.transitions, findings: this.findings });
      this.events = [];
      this.transitions = [];
      this.findings = [];
    }
    while (this.inFlight > MAX_IN_FLIGHT) await this.next();
  }

  /**
   * Insert the last rows, rewrite `runs` and `codon_attempts` from `runs`, write every meta key,
   * COMMIT, create the secondary indexes (full builds) and close the database.
   */
  async finish(runs: RunSummary[], meta: IndexMeta): Promise<void> {
    await this.flush();
    const runRows: unknown[] = [];
    const attemptRows: unknown[] = [];
    pushRunRows(runs, runRows, attemptRows);
    const metaRows: unknown[] = [];
    for (const k of META_KEYS) metaRows.push(k, JSON.stringify(meta[k]));
    this.post({ kind: "finish", runs: runRows, attempts: attemptRows, meta: metaRows });
    while (this.inFlight > 0) await this.next();
    this.ended = true;
    await this.worker.terminate();
  }

  /** Stop the worker (after a failure; the caller removes the temp file). */
  async terminate(): Promise<void> {
    this.ended = true;
    await this.worker.terminate();
  }

  private post(m: { kind: string } & Record<string, unknown>): void {
    this.inFlight += 1;
    this.worker.postMessage(m);
  }

  private next(): Promise<void> {
    this.throwIfFailed();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private settle(): void {
    this.inFlight -= 1;
    this.waiters.shift()?.resolve();
  }

  private fail(e: Error): void {
    if (this.failure === null) this.failure = e;
    for (const w of this.waiters.splice(0)) w.reject(e);
    for (const s of this.scans.values()) s.reject(e);
    this.scans.clear();
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }
}
