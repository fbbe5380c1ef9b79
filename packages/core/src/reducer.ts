/**
 * The pure reducer (format §4.2): `evolve(state, transition, at)` folds one StateTransition into a
 * HankweaveState. Total (never throws, whatever the input), pure (never mutates its inputs, never
 * reads a clock: time is `at`, the journal line's timestamp), and returns the SAME state object
 * whenever the transition changes nothing, with a Finding saying why.
 */
import type { HankweaveState, Run, StateTransition } from "./state-types.js";
import type { Finding } from "./reader-contract.js";
import { crashedRecord, startedRecord, transitionedRecord, type CodonRecord } from "./codon-records.js";
import { isTerminalCodonStatus, isValidCodonEdge, missingMetadata } from "./transition-map.js";
import { checkShape } from "./transition-shape.js";
import { findingOf } from "./reducer-findings.js";
import { appendIndex, carryIndex, positionsOf } from "./reducer-index.js";

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

/** Index of the first record of `codonId` (-1 when none). */
function firstIndexOf(codons: readonly Rec[], codonId: unknown): number {
  const list = positionsOf(codons, codonId);
  return list.length > 0 ? list[0] : -1;
}

/** Index of the latest record of `codonId` satisfying `ok` (-1 when none). */
function lastWhere(codons: readonly Rec[], codonId: unknown, ok: (c: Rec) => boolean): number {
  const list = positionsOf(codons, codonId);
  for (let k = list.length - 1; k >= 0; k--) if (ok(codons[list[k]])) return list[k];
  return -1;
}

/** Index of the earliest record of `codonId` satisfying `ok` (-1 when none). */
function firstWhere(codons: readonly Rec[], codonId: unknown, ok: (c: Rec) => boolean): number {
  const list = positionsOf(codons, codonId);
  for (let k = 0; k < list.length; k++) if (ok(codons[list[k]])) return list[k];
  return -1;
}

const isRunning = (c: Rec): boolean => c.status === "running";
const isNotTerminal = (c: Rec): boolean => !isTerminalCodonStatus(c.status);
const isSentinelTarget = (c: Rec): boolean => SENTINEL_STATUSES.has(c.status as string);
const anyRecord = (): boolean => true;

/** A new state whose run at `ri` has `codons[ci]` replaced by `record` (same codonId). */
function withCodon(state: HankweaveState, ri: number, ci: number, record: unknown): HankweaveState {
  const run = state.runs[ri];
  const codons = run.codons.slice();
  codons[ci] = record as Run["codons"][number];
  carryIndex(run.codons, codons);
  return withRun(state, ri, { ...run, codons });
}

/** A new codons array with `record` appended (index extended when there is one). */
function appendCodon(codons: Run["codons"], record: Run["codons"][number]): Run["codons"] {
  const next = [...codons, record];
  appendIndex(codons, next, record.codonId);
  return next;
}

function withRun(state: HankweaveState, ri: number, run: Run): HankweaveState {
  const runs = state.runs.slice();
  runs[ri] = run;
  return { ...state, runs };
}

/**
 * What one transition does to a state, without building the new state when it only replaces or
 * appends one codon record: `{edit: "replace" | "append", ri, ci, record}` (record `ci` of run `ri`
 * becomes `record`, or `record` is appended at `ci`), else the full `EvolveResult`. Pure: reads
 * `state`, mutates nothing. `evolveReport` applies an edit immutably; the in-place fold of
 * `@hankweave-journal/state` applies it to its private copy — one rule set for both.
 */
export type TransitionPlan =
  | { edit: "replace" | "append"; ri: number; ci: number; record: Run["codons"][number] }
  | (EvolveResult & { edit: null });

function whole(state: HankweaveState, finding: Finding | null): EvolveResult & { edit: null } {
  return { edit: null, state, finding };
}

function replace(ri: number, ci: number, record: unknown): TransitionPlan {
  return { edit: "replace", ri, ci, record: record as Run["codons"][number] };
}

function noTarget(state: HankweaveState, t: StateTransition, why: string, severity: "warning" | "info" = "info"): TransitionPlan {
  const d = t.data as Rec;
  return whole(state, findingOf("NO_TARGET_RECORD", severity, `${t.type}: codon ${String(d.codonId)}: ${why}`, t));
}

/**
 * `{...rec, [key]: value}` — or, when `rec` is in `owned` (a private record of an in-place fold),
 * `rec[key] = value` on it: the same keys in the same order (an existing key keeps its position, a
 * new one goes last). A new record joins `owned`.
 */
function patched(rec: Rec, owned: WeakSet<object> | undefined, key: string, value: unknown): Rec {
  if (owned !== undefined && owned.has(rec)) {
    rec[key] = value;
    return rec;
  }
  const next = { ...rec, [key]: value };
  owned?.add(next);
  return next;
}

/** `patched` of two keys, in this order. */
function patched2(rec: Rec, owned: WeakSet<object> | undefined, k1: string, v1: unknown, k2: string, v2: unknown): Rec {
  if (owned !== undefined && owned.has(rec)) {
    rec[k1] = v1;
    rec[k2] = v2;
    return rec;
  }
  const next = { ...rec, [k1]: v1, [k2]: v2 };
  owned?.add(next);
  return next;
}

/** A fresh copy of a token object, owned when an in-place fold asks. */
function ownedCopy(v: unknown, owned: WeakSet<object> | undefined): Rec {
  const c = { ...(v as Rec) };
  owned?.add(c);
  return c;
}

/**
 * Plan transition `t` at time `at` on `state` (see TransitionPlan; format §4.2, all 14 types). Pure
 * without `owned`. With `owned` (the private objects of an in-place fold, see `applyEditInPlace`),
 * a record or token object in it is updated in place instead of copied, and new ones join it.
 */
export function planTransition(state: HankweaveState, t: StateTransition, at: string, owned?: WeakSet<object>): TransitionPlan {
  const bad = checkShape(t);
  if (bad !== null) return whole(state, bad);
  const type = t.type;
  const d = t.data as Rec;

  if (type === "InitialCheckpointSet") {
    return whole({ ...state, initialCheckpoint: d.sha as string }, null);
  }
  if (type === "CodonTransitioned") {
    if (!isValidCodonEdge(d.from, d.to)) {
      return whole(state, findingOf("INVALID_TRANSITION", "error", `codon ${String(d.codonId)}: ${String(d.from)} → ${String(d.to)} is not in the transition map`, t));
    }
    const missing = missingMetadata(d.to as never, d.metadata);
    if (missing.length > 0) {
      return whole(state, findingOf("MISSING_METADATA", "error", `codon ${String(d.codonId)}: → ${String(d.to)} needs ${missing.join(", ")}`, t, { missing }));
    }
  }
  if (type === "RunStarted") {
    const run: Rec = { runId: d.runId };
    for (const k of ["runFolder", "gitBranch", "startingConditions"]) if (d[k] !== undefined) run[k] = d[k];
    run.codons = [];
    run.status = "running";
    run.startTime = at;
    if (d.serverPid !== undefined) run.serverPid = d.serverPid;
    return whole({ ...state, runs: [run as unknown as Run, ...state.runs], currentRunId: d.runId as string }, null);
  }

  const ri = runIndex(state, d.runId);
  if (type === "RunCompleted" || type === "RunFailed") {
    if (ri < 0) {
      const next = state.currentRunId === null ? state : { ...state, currentRunId: null };
      return whole(next, findingOf("UNKNOWN_RUN", "warning", `${type}: no run ${String(d.runId)}`, t));
    }
    const status = type === "RunCompleted" ? "completed" : "failed";
    const next = withRun(state, ri, { ...state.runs[ri], status, endTime: at });
    return whole({ ...next, currentRunId: null }, null);
  }
  if (ri < 0) return whole(state, findingOf("UNKNOWN_RUN", "warning", `${type}: no run ${String(d.runId)}`, t));
  const run = state.runs[ri];
  const codons = run.codons as unknown as Rec[];

  if (type === "RunCrashed") {
    let next = withRun(state, ri, { ...run, status: "crashed", endTime: d.detectedAt as string });
    const ci = codons.findIndex(isNotTerminal);
    if (ci >= 0) next = withCodon(next, ri, ci, crashedRecord(codons[ci], d.detectedAt));
    return whole(next, null);
  }
  if (type === "CodonStarted") {
    return { edit: "append", ri, ci: codons.length, record: startedRecord(d.codonId as string, at, d.loopContext) };
  }

  const codonId = d.codonId;
  const first = firstIndexOf(codons, codonId);
  if (first < 0) {
    return whole(state, findingOf("UNKNOWN_CODON", "warning", `${type}: run ${String(d.runId)} has no record of codon ${String(codonId)}`, t));
  }

  switch (type) {
    case "CodonTransitioned": {
      let ci = lastWhere(codons, codonId, isNotTerminal);
      if (ci < 0) ci = firstWhere(codons, codonId, (c) => c.status === d.from);
      if (ci < 0) return noTarget(state, t, `no non-terminal record and none in status ${String(d.from)}`, "warning");
      const meta = (typeof d.metadata === "object" && d.metadata !== null ? d.metadata : {}) as Rec;
      return replace(ri, ci, transitionedRecord(codons[ci], d.to as never, meta, at));
    }
    case "CostsUpdated": {
      const ci = first;
      if (codons[ci].status !== "running") return noTarget(state, t, `first record is ${String(codons[ci].status)}, not running`);
      return replace(ri, ci, patched2(codons[ci], owned, "currentCost", d.cost, "currentTokens", ownedCopy(d.tokens, owned)));
    }
    case "CostsIncremented": {
      const ci = lastWhere(codons, codonId, isRunning);
      if (ci < 0) return noTarget(state, t, "no running record");
      const rec = codons[ci];
      const cur = (rec.currentTokens ?? {}) as Rec;
      const delta = d.tokensDelta as Rec;
      const cost = ((rec.currentCost as number | undefined) ?? 0) + (d.costDelta as number);
      const input = ((cur.inputTokens as number | undefined) ?? 0) + (delta.inputTokens as number);
      const output = ((cur.outputTokens as number | undefined) ?? 0) + (delta.outputTokens as number);
      const creation = ((cur.cacheCreationTokens as number | undefined) ?? 0) + (delta.cacheCreationTokens as number);
      const read = ((cur.cacheReadTokens as number | undefined) ?? 0) + (delta.cacheReadTokens as number);
      let tokens: Rec;
      if (owned !== undefined && owned.has(cur)) {
        tokens = cur;
        tokens.inputTokens = input;
        tokens.outputTokens = output;
        tokens.cacheCreationTokens = creation;
        tokens.cacheReadTokens = read;
      } else {
        tokens = { ...cur, inputTokens: input, outputTokens: output, cacheCreationTokens: creation, cacheReadTokens: read };
        owned?.add(tokens);
      }
      return replace(ri, ci, patched2(rec, owned, "currentCost", cost, "currentTokens", tokens));
    }
    case "CodonFinalCostSet": {
      const ci = lastWhere(codons, codonId, isRunning);
      if (ci < 0) return noTarget(state, t, "no running record");
      return replace(ri, ci, patched2(codons[ci], owned, "currentCost", d.finalCost, "currentTokens", ownedCopy(d.finalTokens, owned)));
    }
    case "AssistantMessageCountUpdated": {
      const ci = first;
      const c = codons[ci];
      const ok = c.status === "running" || (c.status === "skipped" && Object.hasOwn(c, "assistantMessageCount"));
      if (!ok) return noTarget(state, t, `first record is ${String(c.status)}`);
      return replace(ri, ci, patched(c, owned, "assistantMessageCount", d.newCount));
    }
    case "ExtensionCountUpdated": {
      const ci = first;
      if (codons[ci].status !== "running") return noTarget(state, t, `first record is ${String(codons[ci].status)}, not running`);
      return replace(ri, ci, patched(codons[ci], owned, "extensionCount", d.extensionCount));
    }
    case "CheckpointCreated": {
      const ci = lastWhere(codons, codonId, anyRecord);
      const c = codons[ci];
      const field = checkpointField(d.checkpointType, c);
      if (field === null) return noTarget(state, t, `checkpoint ${String(d.checkpointType)} does not apply to a ${String(c.status)} record`);
      return replace(ri, ci, patched(c, owned, field, d.sha));
    }
    case "SentinelStatesUpdated": {
      const ci = lastWhere(codons, codonId, isSentinelTarget);
      if (ci < 0) return noTarget(state, t, "no starting/initializing/running/completing-sentinels record");
      const sentinels = { loaded: (d.sentinelStates as unknown[]).slice(), totalCost: d.totalCost };
      return replace(ri, ci, patched(codons[ci], owned, "sentinels", sentinels));
    }
    default:
      // checkShape admits only the 14 types; this is unreachable.
      return whole(state, findingOf("UNKNOWN_TRANSITION_TYPE", "error", `unknown transition type`, t));
  }
}

/**
 * Apply one transition at time `at` and say whether it applied (format §4.2, all 14 types).
 * @example const {state, finding} = evolveReport(s, {type: "CodonStarted", data: {runId, codonId: "a"}}, at)
 */
export function evolveReport(state: HankweaveState, t: StateTransition, at: string): EvolveResult {
  const p = planTransition(state, t, at);
  if (p.edit === null) return { state: p.state, finding: p.finding };
  if (p.edit === "replace") return { state: withCodon(state, p.ri, p.ci, p.record), finding: null };
  const run = state.runs[p.ri];
  return { state: withRun(state, p.ri, { ...run, codons: appendCodon(run.codons, p.record) }), finding: null };
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
