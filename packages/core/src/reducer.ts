/**
 * The pure reducer (SPEC §4.2): `evolve(state, transition, at)` folds one StateTransition into a
 * HankweaveState. Total (never throws, whatever the input), pure (never mutates its inputs, never
 * reads a clock: time is `at`, the journal line's timestamp), and returns the SAME state object
 * whenever the transition changes nothing, with a Finding saying why.
 */
import type { HankweaveState, Run, StateTransition } from "./state-types.js";
import type { Finding } from "./reader-contract.js";
import { crashedRecord, startedRecord, transitionedRecord, type CodonRecord } from "./codon-records.js";
import { isTerminalCodonStatus, isValidCodonEdge, missingMetadata } from "./transition-map.js";
import { checkShape } from "./transition-shape.js";
import { dropped, findingOf } from "./reducer-findings.js";

export { nextResultingState, codonCost, totalCost, currentRunCost } from "./costs.js";

/**
 * The empty state `{runs: [], currentRunId: null, executionPlan: []}` (a new object each call).
 * @example evolve(initialState(), runStarted, "2026-03-05T18:46:55.734Z").runs.length // 1
 */
export function initialState(): HankweaveState {
  return { runs: [], currentRunId: null, executionPlan: [] };
}

/** Result of applying one transition: the new state and, when it was dropped or did nothing, why. */
export interface EvolveResult {
  state: HankweaveState;
  /**
   * Null when the transition applied. Otherwise a Finding (the state is then the input object,
   * except RunCompleted/RunFailed of an unknown run, which still clear `currentRunId`).
   * Severity `error`: the runtime would reject it or it names nothing (INVALID_TRANSITION,
   * MISSING_METADATA, MALFORMED_TRANSITION, UNKNOWN_TRANSITION_TYPE, UNKNOWN_RUN, UNKNOWN_CODON,
   * NO_TARGET_RECORD of a CodonTransitioned). Severity `info`: a status-guarded update that the
   * runtime also ignores silently (NO_TARGET_RECORD, e.g. CheckpointCreated "completed" arriving
   * while the codon is still running — the reference runtime does this routinely).
   */
  finding: Finding | null;
}

type Rec = Record<string, unknown>;

function runIndex(state: HankweaveState, runId: unknown): number {
  return state.runs.findIndex((r) => r.runId === runId);
}

/**
 * Memo of "first index of each codonId" per codons array (arrays are never mutated, so the memo
 * stays true). Carried to the next array when a record is replaced (ids keep their positions) and
 * extended on append, so the first-record rules cost O(1) instead of a scan per transition.
 */
const firstIndexMemo = new WeakMap<readonly unknown[], ReadonlyMap<unknown, number>>();

function firstIndexes(codons: readonly Rec[]): ReadonlyMap<unknown, number> {
  let m = firstIndexMemo.get(codons);
  if (m === undefined) {
    const built = new Map<unknown, number>();
    codons.forEach((c, i) => { if (!built.has(c.codonId)) built.set(c.codonId, i); });
    firstIndexMemo.set(codons, built);
    m = built;
  }
  return m;
}

/** Index of the first record of `codonId` (-1 when none). */
function firstIndexOf(codons: readonly Rec[], codonId: unknown): number {
  return firstIndexes(codons).get(codonId) ?? -1;
}

/** A new state whose run at `ri` has `codons[ci]` replaced by `record` (same codonId). */
function withCodon(state: HankweaveState, ri: number, ci: number, record: unknown): HankweaveState {
  const run = state.runs[ri];
  const codons = run.codons.slice();
  codons[ci] = record as Run["codons"][number];
  const memo = firstIndexMemo.get(run.codons);
  if (memo !== undefined) firstIndexMemo.set(codons, memo);
  return withRun(state, ri, { ...run, codons });
}

/** A new codons array with `record` appended (memo extended when there is one). */
function appendCodon(codons: Run["codons"], record: Run["codons"][number]): Run["codons"] {
  const next = [...codons, record];
  const memo = firstIndexMemo.get(codons);
  if (memo !== undefined) {
    if (memo.has(record.codonId)) firstIndexMemo.set(next, memo);
    else firstIndexMemo.set(next, new Map(memo).set(record.codonId, codons.length));
  }
  return next;
}

function withRun(state: HankweaveState, ri: number, run: Run): HankweaveState {
  const runs = state.runs.slice();
  runs[ri] = run;
  return { ...state, runs };
}

/**
 * Apply one transition at time `at` and say whether it applied (SPEC §4.2, all 14 types).
 * @example const {state, finding} = evolveReport(s, {type: "CodonStarted", data: {runId, codonId: "a"}}, at)
 */
export function evolveReport(state: HankweaveState, t: StateTransition, at: string): EvolveResult {
  const bad = checkShape(t);
  if (bad !== null) return dropped(state, bad);
  const type = t.type;
  const d = t.data as Rec;

  if (type === "InitialCheckpointSet") {
    return { state: { ...state, initialCheckpoint: d.sha as string }, finding: null };
  }
  if (type === "CodonTransitioned") {
    if (!isValidCodonEdge(d.from, d.to)) {
      return dropped(state, findingOf("INVALID_TRANSITION", "error", `codon ${String(d.codonId)}: ${String(d.from)} → ${String(d.to)} is not in the transition map`, t));
    }
    const missing = missingMetadata(d.to as never, d.metadata);
    if (missing.length > 0) {
      return dropped(state, findingOf("MISSING_METADATA", "error", `codon ${String(d.codonId)}: → ${String(d.to)} needs ${missing.join(", ")}`, t, { missing }));
    }
  }
  if (type === "RunStarted") {
    const run: Rec = { runId: d.runId };
    for (const k of ["runFolder", "gitBranch", "startingConditions"]) if (d[k] !== undefined) run[k] = d[k];
    run.codons = [];
    run.status = "running";
    run.startTime = at;
    if (d.serverPid !== undefined) run.serverPid = d.serverPid;
    return { state: { ...state, runs: [run as unknown as Run, ...state.runs], currentRunId: d.runId as string }, finding: null };
  }

  const ri = runIndex(state, d.runId);
  if (type === "RunCompleted" || type === "RunFailed") {
    if (ri < 0) {
      const next = state.currentRunId === null ? state : { ...state, currentRunId: null };
      return { state: next, finding: findingOf("UNKNOWN_RUN", "warning", `${type}: no run ${String(d.runId)}`, t) };
    }
    const status = type === "RunCompleted" ? "completed" : "failed";
    const next = withRun(state, ri, { ...state.runs[ri], status, endTime: at });
    return { state: { ...next, currentRunId: null }, finding: null };
  }
  if (ri < 0) return dropped(state, findingOf("UNKNOWN_RUN", "warning", `${type}: no run ${String(d.runId)}`, t));
  const run = state.runs[ri];
  const codons = run.codons as unknown as Rec[];

  if (type === "RunCrashed") {
    let next = withRun(state, ri, { ...run, status: "crashed", endTime: d.detectedAt as string });
    const ci = codons.findIndex((c) => !isTerminalCodonStatus(c.status));
    if (ci >= 0) next = withCodon(next, ri, ci, crashedRecord(codons[ci], d.detectedAt));
    return { state: next, finding: null };
  }
  if (type === "CodonStarted") {
    const codonsNext = appendCodon(run.codons, startedRecord(d.codonId as string, at, d.loopContext));
    return { state: withRun(state, ri, { ...run, codons: codonsNext }), finding: null };
  }

  const codonId = d.codonId;
  const first = firstIndexOf(codons, codonId);
  if (first < 0) {
    return dropped(state, findingOf("UNKNOWN_CODON", "warning", `${type}: run ${String(d.runId)} has no record of codon ${String(codonId)}`, t));
  }
  const same = (c: Rec): boolean => c.codonId === codonId;
  const noTarget = (why: string, severity: "warning" | "info" = "info"): EvolveResult =>
    dropped(state, findingOf("NO_TARGET_RECORD", severity, `${type}: codon ${String(codonId)}: ${why}`, t));

  switch (type) {
    case "CodonTransitioned": {
      let ci = codons.findLastIndex((c) => same(c) && !isTerminalCodonStatus(c.status));
      if (ci < 0) ci = codons.findIndex((c) => same(c) && c.status === d.from);
      if (ci < 0) return noTarget(`no non-terminal record and none in status ${String(d.from)}`, "warning");
      const meta = (typeof d.metadata === "object" && d.metadata !== null ? d.metadata : {}) as Rec;
      return { state: withCodon(state, ri, ci, transitionedRecord(codons[ci], d.to as never, meta, at)), finding: null };
    }
    case "CostsUpdated": {
      const ci = first;
      if (codons[ci].status !== "running") return noTarget(`first record is ${String(codons[ci].status)}, not running`);
      const rec = { ...codons[ci], currentCost: d.cost, currentTokens: { ...(d.tokens as Rec) } };
      return { state: withCodon(state, ri, ci, rec), finding: null };
    }
    case "CostsIncremented": {
      const ci = codons.findLastIndex((c) => same(c) && c.status === "running");
      if (ci < 0) return noTarget("no running record");
      const rec = codons[ci];
      const cur = (rec.currentTokens ?? {}) as Rec;
      const delta = d.tokensDelta as Rec;
      const add = (k: string): number => ((cur[k] as number | undefined) ?? 0) + (delta[k] as number);
      const next = {
        ...rec,
        currentCost: ((rec.currentCost as number | undefined) ?? 0) + (d.costDelta as number),
        currentTokens: {
          ...cur,
          inputTokens: add("inputTokens"),
          outputTokens: add("outputTokens"),
          cacheCreationTokens: add("cacheCreationTokens"),
          cacheReadTokens: add("cacheReadTokens"),
        },
      };
      return { state: withCodon(state, ri, ci, next), finding: null };
    }
    case "CodonFinalCostSet": {
      const ci = codons.findLastIndex((c) => same(c) && c.status === "running");
      if (ci < 0) return noTarget("no running record");
      const rec = { ...codons[ci], currentCost: d.finalCost, currentTokens: { ...(d.finalTokens as Rec) } };
      return { state: withCodon(state, ri, ci, rec), finding: null };
    }
    case "AssistantMessageCountUpdated": {
      const ci = first;
      const c = codons[ci];
      const ok = c.status === "running" || (c.status === "skipped" && Object.hasOwn(c, "assistantMessageCount"));
      if (!ok) return noTarget(`first record is ${String(c.status)}`);
      return { state: withCodon(state, ri, ci, { ...c, assistantMessageCount: d.newCount }), finding: null };
    }
    case "ExtensionCountUpdated": {
      const ci = first;
      if (codons[ci].status !== "running") return noTarget(`first record is ${String(codons[ci].status)}, not running`);
      return { state: withCodon(state, ri, ci, { ...codons[ci], extensionCount: d.extensionCount }), finding: null };
    }
    case "CheckpointCreated": {
      const ci = codons.findLastIndex(same);
      const c = codons[ci];
      const field = checkpointField(d.checkpointType, c);
      if (field === null) return noTarget(`checkpoint ${String(d.checkpointType)} does not apply to a ${String(c.status)} record`);
      return { state: withCodon(state, ri, ci, { ...c, [field]: d.sha }), finding: null };
    }
    case "SentinelStatesUpdated": {
      const ci = codons.findLastIndex((c) => same(c) && SENTINEL_STATUSES.has(c.status as string));
      if (ci < 0) return noTarget("no starting/initializing/running/completing-sentinels record");
      const sentinels = { loaded: (d.sentinelStates as unknown[]).slice(), totalCost: d.totalCost };
      return { state: withCodon(state, ri, ci, { ...codons[ci], sentinels }), finding: null };
    }
    default:
      // checkShape admits only the 14 types; this is unreachable.
      return dropped(state, findingOf("UNKNOWN_TRANSITION_TYPE", "error", `unknown transition type`, t));
  }
}

const SENTINEL_STATUSES: ReadonlySet<string> = new Set(["starting", "initializing", "running", "completing-sentinels"]);

/** Which field a CheckpointCreated back-patches on record `c`, or null when it does not apply. */
function checkpointField(kind: unknown, c: Rec): string | null {
  switch (kind) {
    case "rig-setup":
      return c.status === "preparing" || c.status === "starting" || Object.hasOwn(c, "rigSetupCheckpoint")
        ? "rigSetupCheckpoint" : null;
    case "completed":
      return c.status === "completed" ? "completionCheckpoint" : null;
    case "error":
      return c.status === "failed" ? "errorCheckpoint" : null;
    case "skipped":
      return c.status === "skipped" ? "skipCheckpoint" : null;
    default:
      return null;
  }
}

/**
 * `evolveReport(...).state`: the state after `t` (the same object when `t` changed nothing).
 * @example const s = journalTransitions.reduce((s, [t, at]) => evolve(s, t, at), initialState())
 */
export function evolve(state: HankweaveState, t: StateTransition, at: string): HankweaveState {
  return evolveReport(state, t, at).state;
}
