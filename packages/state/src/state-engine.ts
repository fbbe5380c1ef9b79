/**
 * The write-ahead state engine (format §2.3, §4.1, §4.4): every transition is validated, journaled
 * FIRST (a `state.transition` line carrying `resultingState`), then applied with `at` = that
 * line's timestamp, then `state.json` is saved atomically. Invariant: for every journal this
 * engine writes, `state.json` is byte-identical to the fold of the journal.
 *
 * Rejection rule: a transition the reducer would drop with an `error`/`warning` finding (invalid
 * edge, missing metadata, unknown run/codon, malformed) is REJECTED before anything is written
 * (JournalError with the finding's code): write-ahead must not journal garbage. A status-guarded
 * no-op (`info`, e.g. CheckpointCreated "completed" while the codon still runs) is journaled, as
 * the reference runtime does, and returned as `finding`.
 */
import { promises as fsp } from "node:fs";
import { evolveReport, JournalError, nextResultingState, PLAN_UPDATED_TYPE, type ErrorCode, type Finding, type HankweaveState, type JournalEvent, type ResultingState, type StateTransition, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import {
  acquireLock, makeEventId, openJournalWriter, resolveDurability,
  type AppendedEvent, type Durability, type JournalWriter, type LockHandle, type NewEvent,
} from "@hankweave-journal/journal";
import { openReader } from "@hankweave-journal/diet";
import { foldJournal } from "./fold-journal.js";
import { StateFolder } from "./state-folder.js";
import { readSavedStates, savedStateOf, serializeState, writeStateText } from "./state-file.js";
import { checkSavedState, detectCrashedRuns, onlyCopyError, savedStateIsOnlyCopy, type OpenReport } from "./engine-open.js";

/**
 * Crash-test hook (like the diet's `DietHook`): called at named points of a transition with the
 * count of such points so far in this engine. `after-append` runs right after the journal line is
 * acknowledged and BEFORE the state is applied and state.json saved — the window write-ahead
 * exists for. Production code passes none.
 */
export type StateEngineHook = (point: "after-append", n: number) => void | Promise<void>;

export interface StateEngineOptions {
  /**
   * One policy for the journal and state.json (durable-file.ts): the journal appends under it and
   * state.json saves fsync unless "none". Default DEFAULT_DURABILITY (`every`), the writer's too.
   */
  durability?: Durability;
  /** Crash-test hook; see StateEngineHook. */
  hook?: StateEngineHook;
  /** Clock (ms since epoch) for line timestamps, ids and RunCrashed.detectedAt. */
  now?: () => number;
  random?: () => number;
  /** "each" (default): save state.json after every state change. "close": only at close (bulk writers). */
  saveState?: "each" | "close";
  /** Journal RunCrashed for `running` runs whose serverPid is dead. Default true. */
  detectCrash?: boolean;
  /** Hold runtime.lock while open. Default true. */
  lock?: boolean;
}

/** The engine over one execution directory. Calls are serialized in submission order. */
export interface StateEngine {
  /** The resolved durability policy of the journal and of state.json. */
  readonly durability: Durability;
  readonly state: HankweaveState;
  readonly resultingState: ResultingState | null;
  readonly openReport: OpenReport;
  /** Validate, journal (write-ahead), apply, save. Rejects invalid transitions without writing. */
  transition(t: StateTransition): Promise<{ line: number; event: JournalEvent; resultingState: ResultingState; finding: Finding | null }>;
  /** Journal `plan.updated` {plan}: the executionPlan. */
  setPlan(plan: unknown[]): Promise<void>;
  /** A non-transition event through the same writer, in the same order. */
  append(e: NewEvent): Promise<AppendedEvent>;
  appendMany(es: NewEvent[]): Promise<AppendedEvent[]>;
  /** Save state.json (if needed), close the journal, release the lock. Idempotent. */
  close(): Promise<void>;
}

function rejectionOf(f: Finding, t: StateTransition): JournalError {
  return new JournalError(f.code as ErrorCode, `transition rejected: ${f.message}`, { ...(f.details ?? {}), actual: t }, {
    hint: "the engine journals only transitions the reducer accepts",
  });
}

class Engine implements StateEngine {
  private chain: Promise<unknown> = Promise.resolve();
  private dirty = false;
  private closed = false;
  private appendsDone = 0;

  constructor(
    private readonly layout: ExecLayout,
    private readonly writer: JournalWriter,
    private readonly folder: StateFolder,
    private readonly carryFrom: HankweaveState | null,
    private readonly lock: LockHandle | null,
    private readonly opts: Required<Pick<StateEngineOptions, "saveState" | "durability">> & StateEngineOptions,
    public openReport: OpenReport,
  ) {}

  get durability(): Durability {
    return this.opts.durability;
  }

  get state(): HankweaveState {
    return this.folder.result(this.carryFrom).state;
  }

  get resultingState(): ResultingState | null {
    return this.folder.resultingState;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(() => {
      if (this.closed) throw new JournalError("JOURNAL_CLOSED", "the state engine is closed");
      return fn();
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Native journals start with a plan.updated marker (see state-folder.ts): write it before the first line. */
  private async ensureMarker(): Promise<void> {
    if (this.folder.journalOrigin !== "empty") return;
    const a = await this.writer.append({ type: PLAN_UPDATED_TYPE, data: { plan: [] } });
    this.folder.feed(a);
    this.dirty = true;
  }

  async save(): Promise<void> {
    await writeStateText(this.layout, serializeState(this.state), { durability: this.opts.durability });
    this.dirty = false;
  }

  private async afterChange(): Promise<void> {
    this.dirty = true;
    if (this.opts.saveState === "each") await this.save();
  }

  transition(t: StateTransition) {
    return this.serial(async () => {
      if (t === null || typeof t !== "object" || typeof t.type !== "string" || t.data === null || typeof t.data !== "object") {
        throw new JournalError("MALFORMED_TRANSITION", "a transition is {type: string, data: object}", { actual: t });
      }
      await this.ensureMarker();
      const ms = this.now();
      const at = new Date(ms).toISOString();
      const result = evolveReport(this.folder.rawState, t, at);
      if (result.finding && result.finding.severity !== "info") throw rejectionOf(result.finding, t);
      const resultingState = nextResultingState(this.folder.resultingState, result.state, t);
      const td = t.data as Record<string, unknown>;
      const data: Record<string, unknown> = { transitionType: t.type };
      if (td.runId !== undefined) data.runId = td.runId;
      if (td.codonId !== undefined) data.codonId = td.codonId;
      data.transition = t;
      data.resultingState = resultingState;
      const id = makeEventId(ms, (this.opts.random ?? Math.random)());
      const appended = await this.writer.append({ id, timestamp: at, type: "state.transition", data });
      this.appendsDone += 1;
      await this.opts.hook?.("after-append", this.appendsDone);
      const { finding } = this.folder.applyTransition(t, at, appended, { result, resultingState });
      await this.afterChange();
      return { line: appended.line, event: appended.event, resultingState, finding };
    });
  }

  setPlan(plan: unknown[]) {
    return this.serial(async () => {
      if (!Array.isArray(plan)) throw new TypeError("setPlan expects an array");
      const a = await this.writer.append({ type: PLAN_UPDATED_TYPE, data: { plan } });
      this.folder.feed(a);
      await this.afterChange();
    });
  }

  append(e: NewEvent) {
    return this.appendMany([e]).then((r) => r[0]);
  }

  appendMany(es: NewEvent[]) {
    return this.serial(async () => {
      for (const e of es) {
        if (e?.type === "state.transition") {
          throw new JournalError("INVALID_EVENT", "state.transition events go through transition(), never append()", { actual: e.type });
        }
      }
      if (es.length === 0) return [];
      await this.ensureMarker();
      const out = await this.writer.appendMany(es);
      const before = this.folder.lastLine;
      for (const a of out) this.folder.feed(a);
      if (this.folder.lastLine !== before) await this.afterChange();
      return out;
    });
  }

  close() {
    if (this.closed) return this.chain.then(() => undefined);
    const done = this.serial(async () => {
      try {
        if (this.dirty || this.opts.saveState === "close") await this.save();
      } finally {
        this.closed = true;
        await this.writer.close();
        await this.lock?.release();
      }
    });
    return done;
  }

  /** Used at open for crash detection (same path as transition()). */
  async journalCrash(t: StateTransition): Promise<void> {
    await this.transition(t);
  }
}

/** True when the writer had to quarantine a torn tail or truncate the journal at open. */
function repaired(w: JournalWriter): boolean {
  const r = w.openReport.repair;
  return r !== null && (r.quarantined !== null || r.truncated);
}

async function ensureExecDirs(l: ExecLayout): Promise<void> {
  const st = await fsp.stat(l.exec).catch(() => null);
  if (!st?.isDirectory()) {
    throw new JournalError("EXEC_NOT_FOUND", `${l.exec} is not an execution directory`, { path: l.exec }, { hint: "create the directory first" });
  }
  await fsp.mkdir(l.eventsDir, { recursive: true });
}

/**
 * Open the engine over `exec` (creating the journal if absent): take runtime.lock, open the writer
 * (which repairs a torn tail without losing bytes), fold the journal, rewrite a state.json that
 * disagrees with the fold (reported in `openReport`), then journal RunCrashed for dead servers.
 * @example const e = await openStateEngine(dir, { durability: "batch" }); await e.transition(t); await e.close();
 */
export async function openStateEngine(exec: ExecRef, opts: StateEngineOptions = {}): Promise<StateEngine> {
  const l = resolveExec(exec);
  const o = { ...opts, saveState: opts.saveState ?? "each", durability: resolveDurability(opts.durability) };
  let lock: LockHandle | null = null;
  let writer: JournalWriter | null = null;
  await ensureExecDirs(l);
  try {
    if (o.lock !== false) {
      const lockOpts: { now?: () => number } = {};
      if (o.now) lockOpts.now = o.now;
      lock = await acquireLock(l, lockOpts);
    }
    const wopts: { durability: Durability; now?: () => number; random?: () => number } = { durability: o.durability };
    if (o.now) wopts.now = o.now;
    if (o.random) wopts.random = o.random;
    writer = await openJournalWriter(l, wopts);
    const savedStates = await readSavedStates(l);
    const carryFrom = savedStateOf(savedStates);
    const reader = await openReader(l);
    let folder: StateFolder;
    try {
      folder = (await foldJournal(reader, { saved: carryFrom })).folder;
    } finally {
      await reader.close();
    }
    const fold = folder.result(carryFrom);
    if (savedStateIsOnlyCopy(fold, savedStates)) throw onlyCopyError(l);
    const check = checkSavedState(l, fold, savedStates);
    const report: OpenReport = { ...check.report, journalRepair: repaired(writer) ? writer.openReport : null };
    const engine = new Engine(l, writer, folder, fold.origin === "foreign" ? carryFrom : null, lock, o, report);
    if (check.rewrite) {
      await engine.save();
      report.rewritten = true;
    }
    if (o.detectCrash !== false) {
      for (const t of detectCrashedRuns(fold.state, (o.now ?? Date.now)())) {
        await engine.journalCrash(t);
        report.crashedRuns.push(String((t.data as { runId?: unknown }).runId));
      }
    }
    return engine;
  } catch (e) {
    await writer?.close().catch(() => undefined);
    await lock?.release().catch(() => undefined);
    throw e;
  }
}
