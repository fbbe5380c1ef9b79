/**
 * The audit fold: pure, line-ordered, no I/O. Feed it parsed lines (`event`) and reader findings
 * (`finding`) in file order; it applies every `state.transition` through the core reducer,
 * recomputes `resultingState`, and reports rows, findings and per-event info through a sink.
 *
 * Guarantees: memory is the reducer state plus one map entry per distinct event id (for
 * DUPLICATE_ID); rows are streamed, never kept. The previous *recomputed* resultingState feeds the
 * next one, so one wrong journaled value yields exactly one RESULTING_STATE_MISMATCH.
 * `snapshot()`/`resume` let the index continue a fold where it stopped (incremental indexing).
 *
 * @example
 *   const fold = new AuditFold({ row: (r) => rows.push(r), finding: (f) => findings.push(f) });
 *   for await (const rec of reader.events({ onFinding: (f) => fold.finding(f) })) fold.event({ ...rec, size: rec.bytes.length });
 */
import {
  applyEditInPlace, categoryOf, initialState, nextResultingState, planTransition,
  type Finding, type FindingSeverity, type HankweaveState, type ResultingState, type Run, type StateTransition,
} from "@hankweave-journal/core";
import { severityOf } from "./audit-codes.js";
import type { AuditFinding, AuditSink, FoldEvent } from "./audit-types.js";
import { compareResultingState, isTerminalStatus, latestRecord, msSameMinute, recordCost, transitionProblem } from "./fold-helpers.js";
import { CodonCosts, type CodonEdit } from "./codon-costs.js";
import { IdLines } from "./id-lines.js";
import { RunLines, type RunLinesSnapshot } from "./run-lines.js";

/** The resumable part of a fold (everything but the id map, which the index rebuilds). */
export interface AuditFoldSnapshot {
  state: HankweaveState;
  recomputed: ResultingState | null;
  lastTime: { line: number; time: string; ms: number } | null;
  ended: [string, { line: number; type: string }][];
  runLines: RunLinesSnapshot;
  counts: { events: number; transitions: number };
}

const RUN_END_TYPES = new Set(["RunCompleted", "RunFailed", "RunCrashed"]);
/** Transitions after which no codon or run cost can change (skip the re-sum). */
const COST_NEUTRAL_TYPES = new Set([
  "AssistantMessageCountUpdated", "ExtensionCountUpdated", "CheckpointCreated", "InitialCheckpointSet", "SentinelStatesUpdated",
]);

/** The index of the (first) run with `runId`, or -1; the newest run (index 0) first: almost every transition targets it. */
function findRunIndex(state: HankweaveState, runId: string | null): number {
  if (runId === null) return -1;
  for (let i = 0; i < state.runs.length; i++) if (state.runs[i].runId === runId) return i;
  return -1;
}

/** The run with `runId`. */
function findRun(state: HankweaveState, runId: string | null): Run | undefined {
  const i = findRunIndex(state, runId);
  return i < 0 ? undefined : state.runs[i];
}

/** The line-ordered audit fold (see the module comment). */
export class AuditFold {
  private stateValue: HankweaveState;
  private recomputed: ResultingState | null;
  private lastTime: AuditFoldSnapshot["lastTime"];
  private readonly ended: Map<string, { line: number; type: string }>;
  private readonly ids = new IdLines();
  private readonly runLines: RunLines;
  private readonly runCostCache = new Map<string, number>();
  private counts: { events: number; transitions: number };
  /**
   * State objects only this fold has seen (see core's `applyEditInPlace`): a codon edit updates
   * them in place instead of copying the run's codons array on every transition. Emptied whenever
   * the state is handed out (`state`, `snapshot`), so what a caller holds never changes.
   */
  private owned = new WeakSet<object>();
  /** `codonCost` of every record of `stateValue`, for the cost sums. */
  private readonly costs = new CodonCosts();

  constructor(private readonly sink: AuditSink = {}, snapshot?: AuditFoldSnapshot, ids?: Iterable<[string, number]>) {
    this.stateValue = snapshot?.state ?? initialState();
    this.recomputed = snapshot?.recomputed ?? null;
    this.lastTime = snapshot?.lastTime ?? null;
    this.ended = new Map(snapshot?.ended ?? []);
    this.runLines = new RunLines(snapshot?.runLines);
    this.counts = { ...(snapshot?.counts ?? { events: 0, transitions: 0 }) };
    if (ids) for (const [id, line] of ids) this.ids.firstLine(id, line);
  }

  /** The reducer state after everything fed so far. */
  get state(): HankweaveState {
    this.owned = new WeakSet();
    return this.stateValue;
  }

  /** Line numbers of runs and attempts (for summaries and the report). */
  get lines(): RunLines {
    return this.runLines;
  }

  /** Events and transitions consumed so far. */
  get totals(): { events: number; transitions: number } {
    return { ...this.counts };
  }

  /** A JSON-friendly copy of the resumable state. */
  snapshot(): AuditFoldSnapshot {
    this.owned = new WeakSet();
    return {
      state: this.stateValue,
      recomputed: this.recomputed,
      lastTime: this.lastTime,
      ended: [...this.ended],
      runLines: this.runLines.snapshot(),
      counts: { ...this.counts },
    };
  }

  /** A reader finding (corrupt line, torn tail): normalised severity, attributed to the current run. */
  finding(f: Finding): void {
    this.emit(f.code, f.message, f.line ?? -1, f.byteOffset, this.stateValue.currentRunId, null, f.details, severityOf(f.code, f.severity));
  }

  /** One parsed line, in file order. */
  event(rec: FoldEvent): void {
    const { line, offset, event } = rec;
    this.counts.events += 1;
    this.checkEnvelope(line, offset, event.id, event.timestamp);
    let run: string | null = this.stateValue.currentRunId;
    const data = event.data as Record<string, unknown> | null;
    let codon: string | null = data !== null && typeof data === "object" && typeof data.codonId === "string" ? data.codonId : null;
    if (event.type === "state.transition") {
      const who = this.transition(rec);
      run = who.run ?? run;
      codon = who.codon;
    }
    this.sink.event?.({
      line, offset, id: event.id, time: event.timestamp, type: event.type, category: categoryOf(event.type), run, codon, size: rec.size,
    });
  }

  /**
   * A valid line that is not a `state.transition`, given by its envelope (id, timestamp, type and
   * `data.codonId` when that is a string, else null): exactly what `event()` does for such a
   * line, without the parsed object.
   */
  envelope(line: number, offset: number, size: number, id: string, timestamp: string, type: string, codon: string | null): void {
    this.counts.events += 1;
    this.checkEnvelope(line, offset, id, timestamp);
    this.sink.event?.({ line, offset, id, time: timestamp, type, category: categoryOf(type), run: this.stateValue.currentRunId, codon, size });
  }

  private checkEnvelope(line: number, offset: number, id: string, timestamp: string): void {
    const run = this.stateValue.currentRunId;
    const first = this.ids.firstLine(id, line);
    if (first >= 0) this.emit("DUPLICATE_ID", `line ${line} reuses id ${id} of line ${first}`, line, offset, run, null, { id, firstLine: first });
    const ms = this.lastTime !== null ? msSameMinute(timestamp, this.lastTime) : Date.parse(timestamp);
    if (Number.isNaN(ms)) {
      this.emit("BAD_TIMESTAMP", `line ${line}: timestamp ${JSON.stringify(timestamp).slice(0, 60)} is not ISO-8601`, line, offset, run, null, { actual: timestamp });
      return;
    }
    const prev = this.lastTime;
    if (prev !== null && ms < prev.ms) {
      this.emit("TIME_BACKWARDS", `line ${line} (${timestamp}) is ${prev.ms - ms} ms before line ${prev.line} (${prev.time})`, line, offset, run, null, {
        previousLine: prev.line, previousTime: prev.time, backwardsMs: prev.ms - ms,
      });
    }
    this.lastTime = { line, time: timestamp, ms };
  }

  private transition(rec: FoldEvent): { run: string | null; codon: string | null } {
    const { line, offset, event } = rec;
    this.counts.transitions += 1;
    const data = event.data as Record<string, unknown>;
    const problem = transitionProblem(data);
    if (problem !== null) {
      const run = typeof data?.runId === "string" ? data.runId : null;
      const codon = typeof data?.codonId === "string" ? data.codonId : null;
      this.emit("MALFORMED_TRANSITION", `line ${line}: ${problem.message}`, line, offset, run ?? this.stateValue.currentRunId, codon, problem.details);
      if (!problem.applicable) return { run, codon };
    }
    const t = data.transition as StateTransition;
    const td = t.data as Record<string, unknown>;
    const runId = typeof td.runId === "string" ? td.runId : null;
    const codonId = typeof td.codonId === "string" ? td.codonId : null;
    const before = this.stateValue;
    const runBefore = findRun(before, runId);

    const endedAt = runId === null ? undefined : this.ended.get(runId);
    if (endedAt !== undefined) {
      this.emit("EVENT_AFTER_RUN_END", `line ${line}: ${t.type} for run ${runId}, which ended with ${endedAt.type} on line ${endedAt.line}`, line, offset, runId, codonId, {
        endLine: endedAt.line, endType: endedAt.type,
      });
    }
    if (t.type === "RunStarted" && runBefore !== undefined) {
      this.emit("DUPLICATE_RUN", `line ${line}: RunStarted for run ${runId}, which already exists`, line, offset, runId, null, {
        firstStartLine: this.runLines.get(runId as string)?.startLine ?? null,
      });
    }
    if (t.type === "CodonStarted" && runBefore !== undefined && codonId !== null) {
      const active = runBefore.codons.findIndex((c) => c.codonId === codonId && !isTerminalStatus(c.status));
      if (active >= 0) {
        const startLine = this.runLines.recordStartLine(runId as string, active);
        this.emit("DUPLICATE_ACTIVE_CODON", `line ${line}: CodonStarted for ${codonId} while its record #${active} (line ${startLine}) is still ${runBefore.codons[active].status}`, line, offset, runId, codonId, {
          activeIndex: active, activeStatus: runBefore.codons[active].status, activeStartLine: startLine,
        });
      }
    }

    let after: HankweaveState;
    let applied = true;
    let edit: CodonEdit | null = null;
    try {
      // evolveReport's rules (planTransition), with codon edits applied in place.
      const plan = planTransition(before, t, event.timestamp, this.owned);
      after = plan.edit === null ? plan.state : applyEditInPlace(before, plan, this.owned);
      if (plan.edit !== null) edit = { ri: plan.ri, ci: plan.ci };
      if (plan.edit === null && plan.finding !== null) {
        applied = false;
        const f = plan.finding;
        // NO_TARGET_RECORD keeps the reducer's severity (info, warning for CodonTransitioned).
        const severity = f.code === "NO_TARGET_RECORD" ? f.severity : undefined;
        this.emit(f.code, `line ${line}: ${f.message}`, line, offset, runId ?? before.currentRunId, codonId, f.details, severity);
      }
    } catch (e) {
      // The reducer computes before it edits, but be safe: nothing owned from here on.
      this.owned = new WeakSet();
      after = before;
      applied = false;
      this.emit("MALFORMED_TRANSITION", `line ${line}: the reducer rejected ${t.type}: ${(e as Error).message}`, line, offset, runId, codonId, {});
    }
    this.stateValue = after;
    this.costs.update(after, edit);

    // CostsIncremented (half the transitions) recomputes both sums: from the kept codon costs.
    const recomputed = t.type === "CostsIncremented" && edit !== null ? this.costSums(after) : nextResultingState(this.recomputed, after, t);
    this.recomputed = recomputed;
    const journaled = (data.resultingState ?? null) as ResultingState | null;
    if (journaled === null || typeof journaled !== "object") {
      this.emit("RESULTING_STATE_MISSING", `line ${line}: no resultingState`, line, offset, runId, codonId, {});
    } else {
      const diffs = compareResultingState(journaled, recomputed);
      if (diffs.length > 0) {
        const what = diffs.map((d) => `${d.field} journaled ${JSON.stringify(d.journaled)} recomputed ${JSON.stringify(d.recomputed)}`).join("; ");
        this.emit("RESULTING_STATE_MISMATCH", `line ${line}: ${what}`, line, offset, runId ?? after.currentRunId, codonId, { diffs });
      }
    }

    if (RUN_END_TYPES.has(t.type) && runId !== null && !this.ended.has(runId)) this.ended.set(runId, { line, type: t.type });
    const riAfter = findRunIndex(after, runId);
    const runAfter = riAfter < 0 ? undefined : after.runs[riAfter];
    if (runAfter !== undefined) this.runLines.sync(runAfter, t.type, line);

    const from = t.type === "CodonTransitioned" && typeof td.from === "string" ? td.from : null;
    const to = t.type === "CodonTransitioned" && typeof td.to === "string" ? td.to : null;
    this.sink.row?.({
      line, offset, time: event.timestamp, run: runId, codon: codonId, transition: t.type, from, to,
      edge: from !== null || to !== null ? `${from}→${to}` : t.type,
      applied,
      codonCost: codonId === null || runAfter === undefined ? null : recordCost(latestRecord(runAfter, codonId)),
      runCost: runAfter === undefined ? null : this.cachedRunCost(riAfter, runAfter.runId, t.type),
      journaled, recomputed,
    });
    return { run: runId, codon: codonId };
  }

  private cachedRunCost(ri: number, runId: string, type: string): number {
    const cached = this.runCostCache.get(runId);
    if (cached !== undefined && COST_NEUTRAL_TYPES.has(type)) return cached;
    const cost = this.costs.runCost(ri);
    this.runCostCache.set(runId, cost);
    return cost;
  }

  /** core's `nextResultingState` after a recomputing transition, from the kept codon costs (same sums, same order). */
  private costSums(after: HankweaveState): ResultingState {
    const current = after.currentRunId === null ? -1 : findRunIndex(after, after.currentRunId);
    return {
      currentRunId: after.currentRunId,
      runCount: after.runs.length,
      totalCost: this.costs.totalCost(),
      currentRunCost: current < 0 ? 0 : this.costs.runCost(current),
    };
  }

  private emit(
    code: string, message: string, line: number, byteOffset: number | undefined, run: string | null, codon: string | null,
    details: Record<string, unknown> | undefined, severity: FindingSeverity = severityOf(code),
  ): void {
    const f: AuditFinding = { code, severity, message, line, run, codon };
    if (byteOffset !== undefined) f.byteOffset = byteOffset;
    if (details !== undefined) f.details = details;
    this.sink.finding?.(f);
  }
}
