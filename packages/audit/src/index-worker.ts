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
 * The worker is the module `index-db.worker.ts`, started by `startWorker` (from the sources
 * and the built package alike). A thread left healthy by one IndexWorker (finished, or scan-only)
 * is kept idle (unref'd: it never keeps the process alive) and serves the next one: starting a
 * thread costs a module load (~0.08 CPU s built, ~0.9 CPU s from the sources through tsx,
 * measured), which a process that audits or indexes many journals (tests, `verify`) pays once.
 * Memory stays bounded: at most `MAX_IN_FLIGHT` batches wait for the worker.
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "@hankweave-journal/cas";
import { workerError } from "@hankweave-journal/journal";
import { sqlite } from "./sqlite.js";
import type { AuditSink } from "./audit-types.js";
import { META_KEYS, type IndexMeta } from "./index-meta.js";
import type { RunSummary } from "./audit-types.js";
import { pushEventRow, pushFindingRow, pushRunRows, pushTransitionRow } from "./index-rows.js";
import type { DatabaseRequest, IndexThreadReply, ScanRequest } from "./index-db.worker.js";
import type { LineChunk } from "@hankweave-journal/core";

/** Batches posted but not yet inserted before `flush` waits. */
const MAX_IN_FLIGHT = 4;

/** The worker's classification of a chunk's lines (see `IndexWorker.scan`); null when the main thread claimed the chunk first. */
export type ChunkScan = { kinds: Uint8Array; strs: (string | null)[] } | { kinds: null; strs: null };

/** A worker thread and who uses it now (null while idle). */
interface Thread {
  worker: Worker;
  owner: IndexWorker | null;
  /** Scan sequence numbers are per thread, so a late answer to an abandoned scan never matches a new owner's. */
  seq: number;
}

/** Healthy threads nobody uses (unref'd). */
const idleThreads: Thread[] = [];

function startThread(): Thread {
  // No loader hooks inherited: the built worker needs none, and from the sources startWorker registers tsx itself.
  const t: Thread = { worker: startWorker(new URL("./index-db.worker.js", import.meta.url), { execArgv: [] }), owner: null, seq: 0 };
  t.worker.on("message", (m: IndexThreadReply) => t.owner?.onMessage(m));
  t.worker.on("error", (e) => t.owner?.onFailure(e));
  t.worker.on("exit", (code) => {
    const i = idleThreads.indexOf(t);
    if (i >= 0) idleThreads.splice(i, 1);
    t.owner?.onFailure(new Error(`index worker exited with code ${code}`));
  });
  return t;
}

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
  private readonly thread: Thread;
  private events: unknown[] = [];
  private transitions: unknown[] = [];
  private findings: unknown[] = [];
  private inFlight = 0;
  private failure: Error | null = null;
  private readonly waiters: { resolve(): void; reject(e: Error): void }[] = [];
  private readonly scans = new Map<number, { resolve(r: ChunkScan): void; reject(e: Error): void }>();
  private ended = false;
  /** A database was opened and not yet finished (the thread must not be reused if we stop now). */
  private dbOpen = false;

  private readonly dbPath: string | null;

  constructor(db: IndexWorkerDatabase | null) {
    this.dbPath = db?.path ?? null;
    // The worker loads better-sqlite3 only when it writes a database: say clearly (here,
    // NATIVE_MODULE_UNAVAILABLE) when it cannot, rather than let the worker die on the load.
    if (db !== null) sqlite();
    this.thread = idleThreads.pop() ?? startThread();
    this.thread.owner = this;
    this.thread.worker.ref();
    if (db !== null) {
      this.dbOpen = true;
      this.post({ kind: "open", db });
    }
  }

  /** A message of the thread (internal: called by the thread's listener). */
  onMessage(m: IndexThreadReply): void {
    if (m.error !== undefined) this.onFailure(Object.assign(new Error(`index worker: ${m.error}`), m.code === undefined ? {} : { code: m.code }));
    else if (m.ok === "scan") {
      const s = this.scans.get(m.seq);
      this.scans.delete(m.seq);
      s?.resolve(m.kinds ? { kinds: m.kinds, strs: m.strs as (string | null)[] } : { kinds: null, strs: null });
    } else this.settle();
  }

  /** The thread failed or exited (internal). */
  onFailure(e: Error): void {
    if (!this.ended) this.fail(e);
  }

  /** Give the thread back to the idle list when it is healthy and holds no database, else stop it. */
  private async release(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const t = this.thread;
    t.owner = null;
    if (this.failure === null && !this.dbOpen) {
      t.worker.unref();
      idleThreads.push(t);
      return;
    }
    await t.worker.terminate();
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
   * Classify the lines of the shared `chunk` in the worker: per line 0 (blank), 1 (a valid envelope that is
   * not a `state.transition`; its id, timestamp, type and codon are the next four `strs`) or 2
   * (anything else: parse it with `parseEventLine`). Runs after the rows posted before it. The
   * worker first claims the chunk (`claim` 0 → 1); when the main thread claimed it already
   * (0 → 2: it got there first and parses the chunk itself), the result is `{kinds: null}`.
   */
  scan(chunk: LineChunk, claim: Int32Array): Promise<ChunkScan> {
    this.throwIfFailed();
    const seq = this.thread.seq++;
    const p = new Promise<ChunkScan>((resolve, reject) => this.scans.set(seq, { resolve, reject }));
    p.catch(() => undefined); // a read-ahead scan may be abandoned after a failure
    const bytes = chunk.bytes;
    if (!(bytes.buffer instanceof SharedArrayBuffer)) throw new TypeError("IndexWorker.scan needs a shared chunk (reader.chunks({shared: true}))");
    const request: ScanRequest = { kind: "scan", seq, buffer: bytes.buffer, byteOffset: bytes.byteOffset, length: bytes.length, lines: chunk.lines, claim };
    this.thread.worker.postMessage(request);
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
    this.dbOpen = false;
    await this.release();
  }

  /**
   * Stop using the worker: after a failure or with a database not finished the thread is stopped
   * (the caller removes the temp file); a scan-only worker's thread is kept for reuse.
   */
  async terminate(): Promise<void> {
    await this.release();
  }

  private post(m: DatabaseRequest): void {
    this.inFlight += 1;
    this.thread.worker.postMessage(m);
  }

  private next(): Promise<void> {
    this.throwIfFailed();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private settle(): void {
    this.inFlight -= 1;
    this.waiters.shift()?.resolve();
  }

  private fail(raw: Error): void {
    // Coded (NO_SPACE from a full disk, READ_ONLY, …, else WORKER_FAILED): never "internal error".
    const e = workerError(raw, this.dbPath ?? "the index worker");
    if (this.failure === null) this.failure = e;
    for (const w of this.waiters.splice(0)) w.reject(e);
    for (const s of this.scans.values()) s.reject(e);
    this.scans.clear();
  }

  private throwIfFailed(): void {
    if (this.failure !== null) throw this.failure;
  }
}
