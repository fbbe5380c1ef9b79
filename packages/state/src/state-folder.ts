/**
 * The incremental fold of a journal into state (format §2.3, §4.2–4.4): feed it journal records in
 * line order, read `result()` at any point. `foldJournal` and the state engine are thin loops over it.
 *
 * Origin rule: a journal is **native** (written by our engine) when its first state-relevant event
 * (state.transition, plan.updated, codon.started, state.snapshot) is a `plan.updated`; our engine
 * writes that marker first. Otherwise it is **foreign** (the reference runtime): codon times are
 * taken exactly from `codon.started` / `state.snapshot`, and run times and `executionPlan` are
 * carried from a saved state.json or approximated, every such field reported.
 */
import {
  applyEditInPlace, currentRunCost, initialState, planTransition, PLAN_UPDATED_TYPE, totalCost,
  type CodonExecution, type EvolveResult, type TransitionPlan, type Finding, type HankweaveState, type JournalEvent, type ResultingState,
  type Run, type StateTransition,
} from "@hankweave-journal/core";
import { patchForeignClock, type ClockFacts, type FieldSource } from "./foreign-clock.js";

/** Every event type a fold may need. */
export const FOLD_TYPES: readonly string[] = ["state.transition", PLAN_UPDATED_TYPE, "codon.started", "state.snapshot"];
/** The types a native journal's fold needs. */
export const NATIVE_FOLD_TYPES: readonly string[] = ["state.transition", PLAN_UPDATED_TYPE];

/** Who wrote the journal (see the module comment); `empty` when it has no state-relevant event. */
export type JournalOrigin = "native" | "foreign" | "empty";

/** The outcome of a fold. */
export interface FoldResult {
  state: HankweaveState;
  /** `resultingState` after the last transition (format §4.3), null before any. */
  resultingState: ResultingState | null;
  /** Reducer findings (dropped transitions) and malformed state events, with line numbers; reader findings too when folded by `foldJournal`. */
  findings: Finding[];
  /** Last line folded (any state-relevant event), null if none. */
  lastLine: number | null;
  /** Number of `state.transition` events with a transition object folded (dropped ones included; malformed ones are findings). */
  transitions: number;
  origin: JournalOrigin;
  /** Fields taken from a saved state.json (foreign journals). */
  carried: FieldSource[];
  /** Fields approximated from line timestamps or left at their initial value (foreign journals). */
  approximated: FieldSource[];
}

const TERMINAL = new Set(["completed", "failed", "skipped"]);
const RECOMPUTE_TYPES = new Set(["RunStarted", "CostsUpdated", "CostsIncremented", "CodonFinalCostSet"]);
/**
 * In-place edits that may change what `totalCost`/`currentRunCost` compute (a status change). The
 * other edited types (costs: recomputed right after; message/extension counts, checkpoints,
 * sentinels, a new `preparing` record: cost 0) leave the cost figures of the state unchanged.
 */
const COST_CHANGING_EDITS = new Set(["CodonTransitioned"]);

/** A position in the journal (what a reader yields). */
export interface FoldInput {
  line: number;
  offset?: number;
  event: JournalEvent;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** Extract the StateTransition of a `state.transition` event's data, or null when malformed. */
export function transitionOf(data: unknown): StateTransition | null {
  if (!isObject(data)) return null;
  const t = data.transition;
  if (!isObject(t) || typeof t.type !== "string" || !isObject(t.data)) return null;
  return t as unknown as StateTransition;
}

/** Streaming, incremental fold. Not thread-safe; feed lines in increasing order. */
export class StateFolder {
  private raw: HankweaveState = initialState();
  /**
   * The containers of `raw` this folder may mutate (its private copies). A rebuild applies the hot
   * transitions (one codon record replaced or appended) in place instead of copying the run's
   * codons array each time; the set is renewed whenever `raw` is handed out (`rawState`,
   * `result()`), so a state anyone else holds is never mutated.
   */
  private owned = new WeakSet<object>();
  /**
   * resultingState is computed lazily: its costs are those of the state after the last
   * RunStarted/Costs* transition (0 before any), currentRunCost zeroed by a later RunCompleted/
   * RunFailed — exactly what chaining nextResultingState gives (format §4.3). Recomputing the
   * bit-exact sums after every cost transition is O(codons), so a rebuild only does it once.
   * `costsFrom` is that state (possibly `raw` itself: later in-place edits keep its cost figures,
   * see COST_CHANGING_EDITS); `costsSnap` holds the figures once an edit would change them.
   */
  private costsFrom: HankweaveState | null = null;
  private costsSnap: { total: number; current: number } | null = null;
  private zeroed = false;
  private rsCache: ResultingState | null = null;
  private readonly found: Finding[] = [];
  private origin: JournalOrigin = "empty";
  private last: number | null = null;
  private count = 0;
  private readonly clock: ClockFacts = { exactStart: new Map(), exactEnd: new Map(), approx: new Map(), planLine: null };
  private cache: { saved: HankweaveState | null; result: FoldResult } | null = null;

  /** The origin decided by the first state-relevant event. */
  get journalOrigin(): JournalOrigin {
    return this.origin;
  }

  /** The raw reducer state (line-timestamp clock, no carrying). */
  get rawState(): HankweaveState {
    this.owned = new WeakSet();
    return this.raw;
  }

  get resultingState(): ResultingState | null {
    if (this.count === 0) return null;
    if (this.rsCache === null) {
      const costs = this.costs();
      this.rsCache = {
        currentRunId: this.raw.currentRunId,
        runCount: this.raw.runs.length,
        totalCost: costs.total,
        currentRunCost: this.zeroed ? 0 : costs.current,
      };
    }
    return this.rsCache;
  }

  get lastLine(): number | null {
    return this.last;
  }

  /** Add a finding produced outside the folder (e.g. by the reader). */
  addFinding(f: Finding): void {
    this.found.push(f);
    this.cache = null;
  }

  /** Fold one journal record. Events of other types are ignored. Never throws on content. */
  feed(rec: FoldInput): void {
    const { event } = rec;
    switch (event.type) {
      case "state.transition": {
        const t = transitionOf(event.data);
        if (t === null) {
          this.note(rec, "INVALID_EVENT", "state.transition data has no {transition: {type, data}}");
          return;
        }
        this.applyTransition(t, event.timestamp, rec);
        return;
      }
      case PLAN_UPDATED_TYPE: {
        this.decide("native");
        const plan = isObject(event.data) ? event.data.plan : undefined;
        if (!Array.isArray(plan)) {
          this.note(rec, "INVALID_EVENT", "plan.updated data.plan is not an array");
          return;
        }
        this.raw = { ...this.raw, executionPlan: plan };
        this.clock.planLine = rec.line;
        this.touch(rec.line);
        return;
      }
      case "codon.started":
        this.decide("foreign");
        if (this.origin === "foreign") this.codonStarted(rec);
        return;
      case "state.snapshot":
        this.decide("foreign");
        if (this.origin === "foreign") this.snapshot(rec);
        return;
      default:
        return;
    }
  }

  /**
   * Apply a transition at time `at` (the line's timestamp). `precomputed` lets the engine pass the
   * `evolveReport` and `resultingState` it already computed for the same (state, t, at).
   */
  applyTransition(
    t: StateTransition, at: string, rec: { line: number; offset?: number },
    precomputed?: { result: EvolveResult; resultingState: ResultingState },
  ): { finding: Finding | null } {
    this.decide("foreign");
    const before = this.raw;
    let dropped: Finding | null;
    let plan: TransitionPlan | null = null;
    let replaced: CodonExecution | undefined;
    if (precomputed) {
      dropped = precomputed.result.finding;
      this.raw = precomputed.result.state;
    } else {
      plan = planTransition(before, t, at, this.owned);
      if (plan.edit === null) {
        dropped = plan.finding;
        this.raw = plan.state;
      } else {
        if (COST_CHANGING_EDITS.has(t.type)) this.freezeCosts();
        if (plan.edit === "replace") replaced = before.runs[plan.ri].codons[plan.ci];
        this.raw = applyEditInPlace(before, plan, this.owned);
        dropped = null;
      }
    }
    this.count += 1;
    if (RECOMPUTE_TYPES.has(t.type)) {
      this.costsFrom = this.raw;
      this.costsSnap = null;
      this.zeroed = false;
    } else if (t.type === "RunCompleted" || t.type === "RunFailed") {
      this.zeroed = true;
    }
    let finding: Finding | null = null;
    if (dropped) {
      finding = { ...dropped, line: rec.line };
      if (rec.offset !== undefined) finding.byteOffset = rec.offset;
      this.found.push(finding);
    }
    if (this.origin === "foreign") {
      if (plan === null || plan.edit === null) this.trackClock(before, this.raw, t, rec.line);
      else this.trackEdit(t, plan, replaced, rec.line);
    }
    this.touch(rec.line);
    this.rsCache = precomputed?.resultingState ?? null;
    return { finding };
  }

  /** The fold so far; `saved` is a saved state.json to carry clock fields and executionPlan from (foreign only). */
  result(saved: HankweaveState | null = null): FoldResult {
    if (this.cache && this.cache.saved === saved) return this.cache.result;
    this.owned = new WeakSet();
    const base = {
      resultingState: this.resultingState, findings: this.found.slice(), lastLine: this.last, transitions: this.count,
      origin: this.origin,
    };
    let result: FoldResult;
    if (this.origin !== "foreign") {
      result = { ...base, state: this.raw, carried: [], approximated: [] };
    } else {
      const patched = patchForeignClock(this.raw, this.clock, saved);
      for (const f of patched.findings) base.findings.push(f);
      result = { ...base, state: patched.state, carried: patched.carried, approximated: patched.approximated };
    }
    this.cache = { saved, result };
    return result;
  }

  /** The cost figures of `costsFrom` (or its snapshot); zeros before any cost transition. */
  private costs(): { total: number; current: number } {
    if (this.costsSnap !== null) return this.costsSnap;
    const at = this.costsFrom;
    return at === null ? { total: 0, current: 0 } : { total: totalCost(at), current: currentRunCost(at) };
  }

  /** Before an in-place edit that may change cost figures: fix them if `costsFrom` may share containers with `raw`. */
  private freezeCosts(): void {
    if (this.costsFrom === null || this.costsSnap !== null) return;
    this.costsSnap = this.costs();
    this.costsFrom = null;
  }

  private decide(origin: "native" | "foreign"): void {
    if (this.origin === "empty") this.origin = origin;
  }

  private touch(line: number): void {
    this.last = line;
    this.cache = null;
  }

  private note(rec: FoldInput, code: string, message: string): void {
    const f: Finding = { code, severity: "warning", message: `line ${rec.line}: ${message}`, line: rec.line };
    if (rec.offset !== undefined) f.byteOffset = rec.offset;
    this.found.push(f);
    this.touch(rec.line);
  }

  private currentRun(): Run | undefined {
    const id = this.raw.currentRunId;
    return id === null ? this.raw.runs[0] : this.raw.runs.find((r) => r.runId === id);
  }

  private codonStarted(rec: FoldInput): void {
    const d = rec.event.data;
    this.touch(rec.line);
    if (!isObject(d) || typeof d.codonId !== "string" || typeof d.startTime !== "string" || !d.startTime) return;
    const run = this.currentRun();
    if (!run) return;
    const idx = lastIndexOf(run.codons, d.codonId);
    if (idx >= 0) setExact(this.clock.exactStart, run.runId, idx, d.startTime);
  }

  private snapshot(rec: FoldInput): void {
    const d = rec.event.data;
    this.touch(rec.line);
    if (!isObject(d) || !Array.isArray(d.completedCodons)) return;
    const run = this.currentRun();
    if (!run) return;
    const attempt = new Map<string, number>();
    // completedCodons is newest first: walk it oldest first so attempt k matches the k-th record.
    for (let i = d.completedCodons.length - 1; i >= 0; i--) {
      const s = d.completedCodons[i] as unknown;
      if (!isObject(s) || typeof s.codonId !== "string") continue;
      const k = attempt.get(s.codonId) ?? 0;
      attempt.set(s.codonId, k + 1);
      const idx = matchRecord(run, s, k, this.clock.exactStart.get(run.runId));
      if (idx < 0) continue;
      const recd = run.codons[idx];
      if (recd.status !== s.status || !TERMINAL.has(recd.status)) continue;
      if (typeof s.startTime === "string" && s.startTime) setExact(this.clock.exactStart, run.runId, idx, s.startTime);
      if (typeof s.endTime === "string" && s.endTime) setExact(this.clock.exactEnd, run.runId, idx, s.endTime);
    }
  }

  /** trackClock for an in-place edit: only record `plan.ci` of run `plan.ri` changed (`replaced` was its old value). */
  private trackEdit(t: StateTransition, plan: Extract<TransitionPlan, { edit: "replace" | "append" }>, replaced: CodonExecution | undefined, line: number): void {
    const runId = this.raw.runs[plan.ri].runId;
    if (t.type === "CodonStarted") {
      this.clock.approx.set(key(runId, plan.ci, "start"), line);
    } else if (t.type === "CodonTransitioned") {
      const n = plan.record;
      if (!TERMINAL.has(n.status)) return;
      if (replaced === undefined || !TERMINAL.has(replaced.status) || endOf(replaced) !== endOf(n)) {
        this.clock.approx.set(key(runId, plan.ci, "end"), line);
        this.clock.exactEnd.get(runId)?.delete(plan.ci);
      }
    }
  }

  /** Record which clock fields this transition stamped with the line time (approximate) or exactly. */
  private trackClock(before: HankweaveState, after: HankweaveState, t: StateTransition, line: number): void {
    const rid = (t.data as { runId?: unknown }).runId;
    const runId = typeof rid === "string" ? rid : null;
    if (runId === null) return;
    const a = this.clock.approx;
    const prev = before.runs.find((r) => r.runId === runId);
    const next = after.runs.find((r) => r.runId === runId);
    if (!next) return;
    switch (t.type) {
      case "RunStarted":
        a.set(key(runId, "run", "start"), line);
        return;
      case "RunCompleted":
      case "RunFailed":
        if (next.endTime !== undefined) a.set(key(runId, "run", "end"), line);
        return;
      case "RunCrashed": {
        a.delete(key(runId, "run", "end"));
        for (const i of terminatedIndexes(prev, next)) {
          a.delete(key(runId, i, "end"));
          this.clock.exactEnd.get(runId)?.delete(i);
        }
        return;
      }
      case "CodonStarted":
        if (!prev || next.codons.length > prev.codons.length) a.set(key(runId, next.codons.length - 1, "start"), line);
        return;
      case "CodonTransitioned":
        for (const i of terminatedIndexes(prev, next)) {
          a.set(key(runId, i, "end"), line);
          this.clock.exactEnd.get(runId)?.delete(i);
        }
        return;
      default:
        return;
    }
  }
}

function key(runId: string, idx: number | "run", which: "start" | "end"): string {
  return `${runId}\u0000${idx}\u0000${which}`;
}

function setExact(m: Map<string, Map<number, string>>, runId: string, idx: number, value: string): void {
  let inner = m.get(runId);
  if (!inner) m.set(runId, (inner = new Map()));
  inner.set(idx, value);
}

function lastIndexOf(codons: CodonExecution[], codonId: string): number {
  for (let i = codons.length - 1; i >= 0; i--) if (codons[i].codonId === codonId) return i;
  return -1;
}

/** Snapshot record → record index: the record whose exact startTime equals it, else the k-th with that codonId. */
function matchRecord(run: Run, s: Record<string, unknown>, k: number, starts: Map<number, string> | undefined): number {
  if (starts && typeof s.startTime === "string") {
    for (const [idx, st] of starts) if (st === s.startTime && run.codons[idx]?.codonId === s.codonId) return idx;
  }
  let seen = 0;
  for (let i = 0; i < run.codons.length; i++) {
    if (run.codons[i].codonId !== s.codonId) continue;
    if (seen === k) return i;
    seen += 1;
  }
  return -1;
}

/** Indexes whose record became terminal between `prev` and `next` (codons only ever append). */
function terminatedIndexes(prev: Run | undefined, next: Run): number[] {
  const out: number[] = [];
  for (let i = 0; i < next.codons.length; i++) {
    const n = next.codons[i];
    if (!TERMINAL.has(n.status)) continue;
    const p = prev?.codons[i];
    if (p === undefined || !TERMINAL.has(p.status) || endOf(p) !== endOf(n)) out.push(i);
  }
  return out;
}

function endOf(c: CodonExecution): unknown {
  return (c as unknown as Record<string, unknown>).endTime;
}
