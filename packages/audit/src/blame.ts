/**
 * `blame`: which journal line made a value of the folded state what it is. One streaming pass
 * over the journal (plain or dieted, through `openReader`): the state-relevant lines are folded
 * with the core reducer's plan (the same rules as every fold), and after each line the value at
 * the path is compared with its previous value, for every run and record the path could name
 * (which run `runs[0]` is, is only known at the end). The last change is the answer; with
 * `history` every change is kept (for numbers with the delta, so a cost shows each increment and
 * the running sum).
 *
 * Foreign journals (reference runtime): the state is the one `rebuild` gives, where codon times
 * come from `codon.started` / `state.snapshot` data, and run times and `executionPlan` may be
 * carried from the saved state.json or approximated from a line's timestamp; the answer says so
 * (`source`), next to the line that set the journal's own value.
 */
import { applyEditInPlace, initialState, JournalError, PLAN_UPDATED_TYPE, planTransition, type HankweaveState, type JournalRecord, type StateTransition, type ExecRef, type ExecLayout, resolveExec } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { recordOfLine, typeFilter } from "@hankweave-journal/journal";
import {
  FOLD_TYPES, HotTransitionParser, StateFolder, readSavedStates, savedStateOf, transitionOf, type FieldSource,
} from "@hankweave-journal/state";
import { indexPathText, parseBlamePath, readAt, type BlamePath, type Segment } from "./blame-path.js";

/** One line that changed the value. */
export interface BlameChange {
  line: number;
  offset: number;
  id: string;
  time: string;
  /** `state.transition` or `plan.updated`. */
  eventType: string;
  /** The transition type (`CostsIncremented`, …), null for plan.updated. */
  transition: string | null;
  /** `from→to` of a CodonTransitioned, else null. */
  edge: string | null;
  previous: unknown;
  value: unknown;
  /** value − previous when both are numbers (a cost increment), else null. */
  delta: number | null;
}

/** Where the reported value comes from. */
export type BlameSource =
  | { kind: "journal" }
  | { kind: "state.json"; note: string }
  | { kind: "line-timestamp"; line: number | null; note: string }
  | { kind: "event-data"; line: number | null; note: string }
  | { kind: "initial"; note: string };

/** The answer of `blame`. */
export interface BlameResult {
  exec: string;
  path: string;
  /** The same place in index form (`runs[0].codons[3].finalCost`). */
  resolved: string;
  runId: string | null;
  codonId: string | null;
  /** The value in the folded state (what `rebuild` gives); undefined when the key is absent. */
  value: unknown;
  /** The value the journal's lines alone give (differs from `value` only for carried/exact clock fields). */
  journalValue: unknown;
  source: BlameSource;
  /** The line that last set the journal's value; null when no line ever set it (initial value). */
  last: BlameChange | null;
  /** Every change in line order (only with `history`; else []). */
  history: BlameChange[];
  /**
   * For a final/partial cost or token field with `history`: the field it was copied from
   * (`currentCost` / `currentTokens` of the same record) and every change of it (each increment
   * with its delta, and the running sum), in line order; else null.
   */
  feeds: { path: string; history: BlameChange[] } | null;
  /** Changes seen (also counted without `history`). */
  changes: number;
  origin: "native" | "foreign" | "empty";
}

/** Options of `blameExecution`. */
export interface BlameOptions {
  history?: boolean;
  signal?: AbortSignal;
}

/** The tracked value of one candidate (a run, or a record of a run, the path may end up naming). */
interface Track {
  prevKey: string | undefined;
  prev: unknown;
  last: BlameChange | null;
  history: BlameChange[];
  changes: number;
}

function keyOf(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  return typeof v === "object" && v !== null ? `j${JSON.stringify(v)}` : `${typeof v}:${String(v)}`;
}

function copyOf(v: unknown): unknown {
  return typeof v === "object" && v !== null ? JSON.parse(JSON.stringify(v)) : v;
}

function newTrack(): Track {
  return { prevKey: undefined, prev: undefined, last: null, history: [], changes: 0 };
}

/** What a line is, for the change records: a change without its values. */
type LineInfo = Omit<BlameChange, "previous" | "value" | "delta">;

/** What one path watches: its candidates' tracks (pure; driven by BlameTracker). */
class PathWatch {
  /** Candidates: "top", or `${runOrdinal}` / `${runOrdinal}:${recordIndex}`, prefixed `${feed}|` for feeds. */
  readonly tracks = new Map<string, Track>();
  /** The rests tracked below each candidate: the path's own, then any `feeds` (e.g. currentCost for finalCost). */
  private readonly rests: Segment[][];

  constructor(readonly path: BlamePath, private readonly keep: boolean, feeds: Segment[][], initial: HankweaveState) {
    this.rests = [path.rest, ...feeds];
    // A top-level key has a value before any line (currentRunId null, executionPlan []): a
    // change is a line that moves it from there. Runs and records do not exist before their line.
    if (path.scope === "top") {
      const v = readAt(initial, path.rest);
      this.tracks.set("top", { ...newTrack(), prevKey: keyOf(v), prev: copyOf(v) });
    }
  }

  /** Re-read the candidates a change may have touched (`touched`: the one record an edit changed). */
  afterChange(state: HankweaveState, info: LineInfo, touched: { ri: number; ci: number } | null): void {
    const p = this.path;
    if (p.scope === "top") {
      this.check("top", state, info);
      return;
    }
    const runs = state.runs;
    const n = runs.length;
    if (touched !== null) {
      // One record of one run changed (or was appended): only that run's candidates.
      const ord = n - 1 - touched.ri;
      const run = runs[touched.ri];
      if (p.codon === null) {
        if (p.rest.length === 0 || p.rest[0] === "codons") this.check(`${ord}`, run, info);
        return;
      }
      if (this.recordMatches(run.codons[touched.ci]?.codonId, touched.ci)) this.check(`${ord}:${touched.ci}`, run.codons[touched.ci], info);
      return;
    }
    // A whole-state transition (run start/end, crash, initial checkpoint): every candidate.
    for (let ri = 0; ri < n; ri++) {
      const ord = n - 1 - ri;
      const run = runs[ri];
      if (p.codon === null) this.check(`${ord}`, run, info);
      else run.codons.forEach((c, ci) => {
        if (this.recordMatches(c.codonId, ci)) this.check(`${ord}:${ci}`, c, info);
      });
    }
  }

  private recordMatches(codonId: string | undefined, ci: number): boolean {
    const c = (this.path as Extract<BlamePath, { scope: "run" }>).codon!;
    return c.by === "index" ? c.index === ci : c.codonId === codonId;
  }

  private check(key: string, root: unknown, info: LineInfo): void {
    for (let i = 0; i < this.rests.length; i++) this.checkOne(i === 0 ? key : `${i}|${key}`, readAt(root, this.rests[i]), info);
  }

  private checkOne(key: string, v: unknown, info: LineInfo): void {
    const k = keyOf(v);
    let t = this.tracks.get(key);
    if (t === undefined) {
      t = newTrack();
      this.tracks.set(key, t);
    }
    if (k === t.prevKey) return;
    const value = copyOf(v);
    const change: BlameChange = {
      ...info, previous: t.prev, value,
      delta: typeof value === "number" && typeof t.prev === "number" ? value - t.prev : null,
    };
    t.prevKey = k;
    t.prev = value;
    t.last = change;
    t.changes += 1;
    if (this.keep) t.history.push(change);
  }
}

/**
 * The one-pass tracker (pure): feed the state-relevant records in line order; one fold serves
 * every watched path. Then read `current` (the journal's state) and `trackOf`.
 */
export class BlameTracker {
  private state: HankweaveState = initialState();
  private owned = new WeakSet<object>();
  private readonly watches: PathWatch[];
  /** Line of the codon.started that gave a record its exact start (foreign journals). */
  readonly startedLine = new Map<string, number>();
  /** Last state.snapshot line per run ordinal (foreign journals: exact end times). */
  readonly snapshotLine = new Map<number, number>();

  /** Watch `paths` (one or several); `feeds[i]` are extra rests watched below path i's candidates. */
  constructor(paths: BlamePath | readonly BlamePath[], keep: boolean, feeds: readonly Segment[][][] = []) {
    const list = Array.isArray(paths) ? paths : [paths as BlamePath];
    this.watches = list.map((p, i) => new PathWatch(p, keep, feeds[i] ?? [], this.state));
  }

  /** The reducer state so far (the journal's own clock). */
  get current(): HankweaveState {
    this.owned = new WeakSet();
    return this.state;
  }

  /** Fold one record of a state-relevant type; other types are ignored. */
  feed(rec: JournalRecord): void {
    const e = rec.event;
    if (e.type === PLAN_UPDATED_TYPE) {
      const plan = (e.data as { plan?: unknown } | null)?.plan;
      if (!Array.isArray(plan)) return;
      this.state = { ...this.state, executionPlan: plan as HankweaveState["executionPlan"] };
      this.owned = new WeakSet();
      const info = this.info(rec, null, null);
      for (const w of this.watches) if (w.path.scope === "top") w.afterChange(this.state, info, null);
      return;
    }
    if (e.type === "codon.started" || e.type === "state.snapshot") {
      this.clockLine(rec);
      return;
    }
    if (e.type !== "state.transition") return;
    const t = transitionOf(e.data);
    if (t === null) return;
    this.feedTransition(t as StateTransition, e.timestamp, rec.line, rec.offset, () => e.id);
  }

  /**
   * Fold one `state.transition` given by its transition and line timestamp (the fast path of a
   * plain journal reads both without parsing the line); `idOf` is called, synchronously, only
   * when the line changed a watched value.
   */
  feedTransition(t: StateTransition, timestamp: string, line: number, offset: number, idOf: () => string): void {
    const d = t.data as Record<string, unknown>;
    const before = this.state;
    let touched: { ri: number; ci: number } | null = null;
    const plan = planTransition(before, t, timestamp, this.owned);
    if (plan.edit === null) {
      if (plan.state !== before) this.owned = new WeakSet();
      this.state = plan.state;
    } else {
      this.state = applyEditInPlace(before, plan, this.owned);
      touched = { ri: plan.ri, ci: plan.ci };
    }
    if (this.state === before && touched === null) return;
    let id: string | undefined;
    const info: LineInfo = {
      line, offset, time: timestamp, eventType: "state.transition", transition: t.type,
      edge: t.type === "CodonTransitioned" ? `${String(d.from)}→${String(d.to)}` : null,
      get id(): string {
        id ??= idOf();
        return id;
      },
    };
    for (const w of this.watches) w.afterChange(this.state, info, touched);
  }

  private info(rec: JournalRecord, transition: string | null, edge: string | null): LineInfo {
    return { line: rec.line, offset: rec.offset, id: rec.event.id, time: rec.event.timestamp, eventType: rec.event.type, transition, edge };
  }

  private clockLine(rec: JournalRecord): void {
    const runs = this.state.runs;
    if (runs.length === 0) return;
    const id = this.state.currentRunId;
    const ri = id === null ? 0 : Math.max(0, runs.findIndex((r) => r.runId === id));
    const ord = runs.length - 1 - ri;
    if (rec.event.type === "state.snapshot") {
      this.snapshotLine.set(ord, rec.line);
      return;
    }
    const codonId = (rec.event.data as { codonId?: unknown } | null)?.codonId;
    const codons = runs[ri].codons;
    for (let i = codons.length - 1; i >= 0; i--) {
      if (codons[i].codonId === codonId) {
        this.startedLine.set(`${ord}:${i}`, rec.line);
        return;
      }
    }
  }

  /** The track of a resolved candidate of watched path `watch` (a fresh, empty one when no line touched it). */
  trackOf(ord: number | null, ci: number | null, feed = 0, watch = 0): Track {
    const key = ord === null ? "top" : ci === null ? `${ord}` : `${ord}:${ci}`;
    return this.watches[watch].tracks.get(feed === 0 ? key : `${feed}|${key}`) ?? newTrack();
  }
}

/** Resolve a parsed path against a final state: run index (newest first), record index. */
export function resolvePath(path: BlamePath, state: HankweaveState): { ri: number | null; ci: number | null } {
  if (path.scope === "top") return { ri: null, ci: null };
  const runs = state.runs;
  const ri = path.run.by === "index" ? path.run.index : runs.findIndex((r) => r.runId === (path.run as { runId: string }).runId);
  if (ri < 0 || ri >= runs.length) {
    throw new JournalError("BLAME_PATH_NOT_FOUND", `path ${JSON.stringify(path.text)}: no such run (the state has ${runs.length} run(s))`, {
      actual: path.text, expected: runs.map((r) => r.runId).join(", "),
    }, { hint: "runs[0] is the newest run; `hankweave-journal summary <exec>` lists the runs" });
  }
  if (path.codon === null) return { ri, ci: null };
  const codons = runs[ri].codons;
  let ci: number;
  if (path.codon.by === "index") ci = path.codon.index;
  else {
    const { codonId, attempt } = path.codon;
    const matches = codons.map((c, i) => (c.codonId === codonId ? i : -1)).filter((i) => i >= 0);
    ci = attempt === null ? matches[matches.length - 1] ?? -1 : matches[attempt - 1] ?? -1;
  }
  if (ci < 0 || ci >= codons.length) {
    throw new JournalError("BLAME_PATH_NOT_FOUND", `path ${JSON.stringify(path.text)}: run ${runs[ri].runId} has no such codon record (${codons.length} records)`, {
      actual: path.text,
    }, { hint: "`hankweave-journal summary <exec>` lists each run's codon attempts" });
  }
  return { ri, ci };
}

const ID_PREFIX = Buffer.from('{"id":"', "latin1");

/** The id of a canonical line (`{"id":"…",…`), read from its bytes; any other line is parsed. */
function idOfLine(buf: Buffer, start: number, end: number): string {
  if (end - start > ID_PREFIX.length && buf.compare(ID_PREFIX, 0, ID_PREFIX.length, start, start + ID_PREFIX.length) === 0) {
    const close = buf.indexOf(0x22, start + ID_PREFIX.length);
    const raw = buf.toString("utf8", start + ID_PREFIX.length, close);
    if (close > 0 && close < end && !raw.includes("\\")) return raw;
  }
  return String((JSON.parse(buf.toString("utf8", start, end)) as { id: unknown }).id);
}

/** Fields a codon record copies from its running figures when it ends (format §4.2). */
const FED_BY: Record<string, string> = {
  finalCost: "currentCost", partialCost: "currentCost", finalTokens: "currentTokens", partialTokens: "currentTokens",
};

/** For `codons[j].finalCost` (and partialCost, finalTokens[.x], partialTokens[.x]): the running field it came from. */
function feedOf(path: BlamePath): Segment[] | null {
  if (path.scope !== "run" || path.codon === null || path.rest.length === 0) return null;
  const fed = FED_BY[String(path.rest[0])];
  return fed === undefined ? null : [fed, ...path.rest.slice(1)];
}

/** The index-form text of `rest` below a resolved place, for matching rebuild's carried/approximated paths. */
function fieldPath(ri: number | null, ci: number | null, rest: readonly Segment[]): string {
  return indexPathText(ri, ci, rest);
}

/**
 * Blame `pathText` in `exec`: the journal line that last set the value, and with `history` every
 * line that changed it. One streaming pass; read-only.
 * Throws BLAME_PATH_INVALID / BLAME_PATH_NOT_FOUND, and the reader's errors (no journal, …).
 * @example const b = await blameExecution("/runs/x", "runs[0].codons[3].finalCost"); b.last?.line
 */
export async function blameExecution(exec: ExecRef, pathText: string, opts: BlameOptions = {}): Promise<BlameResult> {
  const [one] = await blameMany(exec, [pathText], opts);
  if (one instanceof JournalError) throw one;
  return one;
}

/**
 * Blame several paths in ONE streaming pass (one fold serves them all). Each answer is a
 * BlameResult, or the JournalError (BLAME_PATH_NOT_FOUND) of a path the state does not have.
 * Throws BLAME_PATH_INVALID before reading when a path does not parse.
 * @example const [a, b] = await blameMany("/runs/x", ["currentRunId", "runs[0].status"]);
 */
export async function blameMany(exec: ExecRef, pathTexts: readonly string[], opts: BlameOptions = {}): Promise<(BlameResult | JournalError)[]> {
  const paths = pathTexts.map(parseBlamePath);
  const feedRests = paths.map((p) => (opts.history === true ? feedOf(p) : null));
  const tracker = new BlameTracker(paths, opts.history === true, feedRests.map((f) => (f === null ? [] : [f])));
  const folder = new StateFolder();
  const layout = resolveExec(exec);
  const saved = savedStateOf(await readSavedStates(layout));
  const reader = await openReader(layout);
  // Only a foreign journal needs rebuild's fold next to the tracker (clock fields, carried
  // executionPlan); a native one (first state-relevant event a plan.updated) folds to the tracker's state.
  let origin = "empty" as "native" | "foreign" | "empty";
  try {
    const feed = (rec: JournalRecord): void => {
      if (origin === "empty") origin = rec.event.type === PLAN_UPDATED_TYPE ? "native" : "foreign";
      tracker.feed(rec);
      if (origin === "foreign") folder.feed(rec);
    };
    if (reader.kind === "plain") {
      // The plain journal's fast path through the reader's raw chunks (as rebuild's fold-lines): lines of other types cost a type
      // sniff; a hot transition is read by HotTransitionParser without JSON.parse, its id only
      // read when it changed a watched value; every other line goes through the reader's parse.
      const filter = typeFilter(FOLD_TYPES)!;
      const hot = new HotTransitionParser();
      const visit = (buf: Buffer, start: number, end: number, line: number, offset: number, terminated: boolean): undefined => {
        if (terminated) {
          const wanted = filter.sniffAt(buf, start, end);
          if (wanted === false) return undefined;
          if (wanted === true) {
            const t = hot.match(buf, start, end);
            if (t !== undefined) {
              if (origin === "empty") origin = "foreign";
              tracker.feedTransition(t, hot.timestamp, line, offset, () => idOfLine(buf, start, end));
              if (origin === "foreign") folder.applyTransition(t, hot.timestamp, { line, offset });
              return undefined;
            }
          }
        }
        const rec = recordOfLine({ line, offset, bytes: buf.subarray(start, end), terminated }, filter, undefined);
        if (rec !== undefined) feed(rec);
        return undefined;
      };
      for await (const chunk of reader.chunks()) {
        const buf = chunk.bytes;
        if (!chunk.terminated) {
          visit(buf, 0, buf.length, chunk.firstLine, chunk.firstOffset, false);
          continue;
        }
        let line = chunk.firstLine;
        for (let start = 0; start < buf.length; line++) {
          const end = buf.indexOf(10, start);
          visit(buf, start, end, line, chunk.firstOffset + start, true);
          start = end + 1;
        }
        if (opts.signal?.aborted) throw opts.signal.reason;
      }
    } else {
      let n = 0;
      for await (const rec of reader.events({ types: FOLD_TYPES, onFinding: () => undefined })) {
        feed(rec);
        if (opts.signal && (++n & 0xfff) === 0 && opts.signal.aborted) throw opts.signal.reason;
      }
    }
  } finally {
    await reader.close();
  }
  const raw = tracker.current;
  const fold = origin === "foreign" ? folder.result(saved) : { state: raw, carried: [], approximated: [], origin };
  return paths.map((path, i) => {
    try {
      return answer(layout, path, i, feedRests[i], tracker, raw, fold);
    } catch (e) {
      if (e instanceof JournalError) return e;
      throw e;
    }
  });
}

function answer(
  layout: ExecLayout, path: BlamePath, watch: number, feedRest: Segment[] | null, tracker: BlameTracker, raw: HankweaveState,
  fold: { state: HankweaveState; carried: FieldSource[]; approximated: FieldSource[]; origin: "native" | "foreign" | "empty" },
): BlameResult {
  const pathText = path.text;
  const { ri, ci } = resolvePath(path, raw);
  const ord = ri === null ? null : raw.runs.length - 1 - ri;
  const track = tracker.trackOf(ord, ci, 0, watch);
  const root = (s: HankweaveState): unknown => (ri === null ? s : ci === null ? s.runs[ri] : s.runs[ri]?.codons[ci]);
  const journalValue = readAt(root(raw), path.rest);
  const value = readAt(root(fold.state), path.rest);
  const where = fieldPath(ri, ci, path.rest);
  let source: BlameSource = { kind: "journal" };
  const covers = (f: FieldSource): boolean => where === f.path || where.startsWith(`${f.path}[`) || where.startsWith(`${f.path}.`);
  const carried = fold.carried.find(covers);
  const approx = fold.approximated.find(covers);
  if (carried !== undefined) {
    source = { kind: "state.json", note: `carried from the saved state.json (${carried.path}): the reference runtime does not journal it` };
  } else if (approx !== undefined) {
    source = approx.source === "initial"
      ? { kind: "initial", note: `${approx.path} is not journaled and no saved state.json gave it: left at its initial value` }
      : { kind: "line-timestamp", line: approx.line ?? null, note: `approximated from the timestamp of line ${approx.line} (the runtime's wall clock is typically 1–20 ms earlier)` };
  } else if (keyOf(value) !== keyOf(journalValue)) {
    const field = path.rest[path.rest.length - 1];
    const line = field === "startTime" && ord !== null && ci !== null ? tracker.startedLine.get(`${ord}:${ci}`) ?? null : ord !== null ? tracker.snapshotLine.get(ord) ?? null : null;
    source = { kind: "event-data", line, note: `taken exactly from ${field === "startTime" ? "codon.started" : "state.snapshot"} data${line !== null ? ` on line ${line}` : ""} (the runtime's clock), not from the transition line's timestamp` };
  }
  if (value === undefined && journalValue === undefined && track.changes === 0) {
    throw new JournalError("BLAME_PATH_NOT_FOUND", `path ${JSON.stringify(pathText)}: the folded state has no value there`, { actual: pathText }, {
      hint: "see the state with `hankweave-journal rebuild <exec> --stdout`",
    });
  }
  const run = ri === null ? null : raw.runs[ri];
  return {
    exec: layout.exec, path: pathText, resolved: where, runId: run?.runId ?? null, codonId: ci === null ? null : run?.codons[ci]?.codonId ?? null,
    value, journalValue, source, last: track.last, history: track.history,
    feeds: feedRest === null ? null : { path: fieldPath(ri, ci, feedRest), history: tracker.trackOf(ord, ci, 1, watch).history },
    changes: track.changes, origin: fold.origin,
  };
}
