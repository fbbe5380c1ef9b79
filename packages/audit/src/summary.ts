/**
 * `summary`: what happened in an execution, on one screen. Per run (oldest first): status, start,
 * duration, cost, tokens; then its codon attempts in order, retries and loop iterations grouped
 * under their codon (`implement#0..#4: 4 completed, 1 failed`), and for every failed, crashed or
 * skipped attempt its reason and the journal line to look at. Built from one streaming audit pass
 * (`streamAudit`), outcomes by the one rule of `outcomes.ts`.
 */
import type { TokenUsage } from "@hankweave-journal/core";
import { streamAudit, type AuditEnd } from "./audit-run.js";
import type { AttemptOutcome, CodonAttempt, RunSummary } from "./audit-types.js";
import { countOutcomes, formatOutcomes, tokenTotal, type OutcomeCounts } from "./outcomes.js";
import { type ExecRef } from "@hankweave-journal/core";

/** One codon attempt as the summary shows it. */
export interface SummaryAttempt {
  /** Position in the run's `codons` array. */
  index: number;
  codon: string;
  /** 1-based count of records with this codonId in the run (2+ = a retry). */
  attempt: number;
  outcome: AttemptOutcome;
  status: string;
  startTime: string;
  endTime: string | null;
  /** endTime − startTime in ms; null while not ended. */
  durationMs: number | null;
  cost: number;
  tokens: number;
  loop: { loopId: string; iteration: number } | null;
  /** Why it did not complete (failed, crashed, skipped), else null. */
  reason: string | null;
  /** The journal line to look at: where it ended (failed/crashed/skipped/completed), else where it started. */
  line: number;
  startLine: number;
  endLine: number | null;
}

/** Attempts of one codon (its retries, or its loop iterations `name#0..#n`) in a run. */
export interface SummaryGroup {
  /** `implement#0..#4`, `step-4-flaky ×2` or the codon id. */
  label: string;
  /** The codon id without its `#n` loop suffix. */
  codon: string;
  /** Indexes (into the run's attempts) of the members, in order. */
  members: number[];
  outcomes: OutcomeCounts;
  /** Records beyond the first of the same codonId (retries). */
  retries: number;
  /** Distinct loop iterations among the members. */
  iterations: number;
  cost: number;
  /** Sum of the members' durations (ended ones). */
  durationMs: number;
}

/** One run in the summary. */
export interface SummaryRun {
  run: string;
  status: string;
  startTime: string;
  endTime: string | null;
  durationMs: number | null;
  cost: number;
  tokens: TokenUsage;
  tokenTotal: number;
  startLine: number | null;
  endLine: number | null;
  outcomes: OutcomeCounts;
  attempts: SummaryAttempt[];
  groups: SummaryGroup[];
}

/** The whole summary (`--json` prints it; keys stable, lists may be empty). */
export interface ExecutionSummary {
  exec: string;
  kind: "plain" | "dieted";
  events: number;
  transitions: number;
  findings: { error: number; warning: number; info: number };
  byCode: Record<string, number>;
  totalCost: number;
  runs: SummaryRun[];
}

function span(start: string, end: string | null): number | null {
  if (end === null) return null;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) ? ms : null;
}

/** The codon id without a trailing `#<n>` (the runtime's loop iteration suffix). */
export function baseCodonId(codon: string): string {
  return codon.replace(/#\d+$/, "");
}

function attemptOf(a: CodonAttempt): SummaryAttempt {
  return {
    index: a.index, codon: a.codon, attempt: a.attempt, outcome: a.outcome, status: a.status,
    startTime: a.startTime, endTime: a.endTime, durationMs: span(a.startTime, a.endTime), cost: a.cost, tokens: tokenTotal(a.tokens),
    loop: a.loop === null ? null : { loopId: a.loop.loopId, iteration: a.loop.iteration },
    reason: a.reason, line: a.endLine ?? a.startLine, startLine: a.startLine, endLine: a.endLine,
  };
}

/** Group a run's attempts by codon (loop iterations and retries together), ordered by first attempt. */
export function groupAttempts(attempts: SummaryAttempt[]): SummaryGroup[] {
  const byKey = new Map<string, number[]>();
  attempts.forEach((a, i) => {
    const key = a.loop !== null ? `${a.loop.loopId}\u0000${baseCodonId(a.codon)}` : `\u0000${a.codon}`;
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [i]);
    else list.push(i);
  });
  return [...byKey.values()].map((members) => {
    const ms = members.map((i) => attempts[i]);
    const first = ms[0];
    const base = baseCodonId(first.codon);
    const iters = new Set(ms.filter((a) => a.loop !== null).map((a) => a.loop!.iteration));
    const retries = ms.filter((a) => a.attempt > 1).length;
    let label = first.codon;
    if (iters.size > 1) {
      const sorted = [...iters].sort((x, y) => x - y);
      label = `${base}#${sorted[0]}..#${sorted[sorted.length - 1]}`;
    } else if (ms.length > 1) {
      label = `${first.codon} ×${ms.length}`;
    }
    let cost = 0;
    let durationMs = 0;
    for (const a of ms) {
      cost += a.cost;
      durationMs += a.durationMs ?? 0;
    }
    return { label, codon: base, members, outcomes: countOutcomes(ms.map((a) => a.outcome)), retries, iterations: iters.size, cost, durationMs };
  });
}

/** One run of an audit end as the summary shows it (attempts, groups, outcome counts). Pure. */
export function summaryRunOf(r: RunSummary): SummaryRun {
  const attempts = r.attempts.map(attemptOf);
  return {
    run: r.run, status: r.status, startTime: r.startTime, endTime: r.endTime, durationMs: span(r.startTime, r.endTime),
    cost: r.cost, tokens: { ...r.tokens }, tokenTotal: tokenTotal(r.tokens), startLine: r.startLine, endLine: r.endLine,
    outcomes: countOutcomes(attempts.map((a) => a.outcome)), attempts, groups: groupAttempts(attempts),
  };
}

/** The summary of an audit end. Pure. */
export function summaryOf(end: AuditEnd): ExecutionSummary {
  const runs = end.runs.map(summaryRunOf);
  let totalCost = 0;
  for (const r of end.runs) totalCost += r.cost;
  return {
    exec: end.exec, kind: end.kind, events: end.events, transitions: end.transitions, findings: { ...end.findings },
    byCode: { ...end.byCode }, totalCost, runs,
  };
}

/**
 * Audit `exec` in one streaming pass and summarize it. Read-only.
 * @example const s = await summarizeExecution("/runs/x"); s.runs[0].groups.map((g) => g.label)
 */
export async function summarizeExecution(exec: ExecRef, signal?: AbortSignal): Promise<ExecutionSummary> {
  return summaryOf(await streamAudit(exec, {}, {}, signal));
}
