/**
 * What the HTML report shows, gathered in one streaming audit pass: runs with their attempts,
 * each run's cumulative cost over time (downsampled), token totals and the findings.
 */
import { streamAudit, type AuditEnd } from "./audit-run.js";
import type { AuditFinding, RunSummary } from "./audit-types.js";
import { type ExecRef } from "@hankweave-journal/core";

/** One point of a run's cumulative cost curve. */
export interface CostPoint {
  /** Milliseconds since the epoch. */
  t: number;
  cost: number;
  line: number;
}

/** Everything the renderer needs; plain data. */
export interface ReportData {
  exec: string;
  kind: "plain" | "dieted";
  events: number;
  transitions: number;
  findingCounts: { error: number; warning: number; info: number };
  /** Findings per code (all of them, also those beyond MAX_REPORT_FINDINGS). */
  byCode: Record<string, number>;
  runs: RunSummary[];
  /** Per run id: cost after each transition that changed it (plus the first and last). */
  costSeries: Record<string, CostPoint[]>;
  findings: AuditFinding[];
  /** Findings not kept in `findings` (beyond MAX_REPORT_FINDINGS). */
  findingsOmitted: number;
  /** Time of the last transition, for attempts still running. */
  lastTime: string | null;
}

/** The report lists at most this many findings (the rest are counted). */
export const MAX_REPORT_FINDINGS = 2000;
/** A cost curve keeps at most about this many points (halved by decimation when exceeded). */
export const MAX_COST_POINTS = 4000;

function decimate(points: CostPoint[]): CostPoint[] {
  const last = points[points.length - 1];
  const kept = points.filter((_, i) => i % 2 === 0);
  if (kept[kept.length - 1] !== last) kept.push(last);
  return kept;
}

/**
 * Audit `exec` and collect the report data (memory: the findings kept plus ≤ MAX_COST_POINTS per run).
 * @example const data = await collectReportData("/runs/x"); data.runs[0].attempts.length
 */
export async function collectReportData(exec: ExecRef): Promise<ReportData> {
  const costSeries: Record<string, CostPoint[]> = {};
  const findings: AuditFinding[] = [];
  let omitted = 0;
  let lastTime: string | null = null;
  const end: AuditEnd = await streamAudit(exec, {}, {
    row: (r) => {
      lastTime = r.time;
      if (r.run === null || r.runCost === null) return;
      const t = Date.parse(r.time);
      if (Number.isNaN(t)) return;
      let series = costSeries[r.run];
      if (series === undefined) series = costSeries[r.run] = [];
      const prev = series[series.length - 1];
      if (prev !== undefined && prev.cost === r.runCost) return;
      series.push({ t, cost: r.runCost, line: r.line });
      if (series.length > MAX_COST_POINTS) costSeries[r.run] = decimate(series);
    },
    finding: (f) => {
      if (findings.length < MAX_REPORT_FINDINGS) findings.push(f);
      else omitted += 1;
    },
  });
  return {
    exec: end.exec, kind: end.kind, events: end.events, transitions: end.transitions, findingCounts: { ...end.findings }, byCode: { ...end.byCode },
    runs: end.runs, costSeries, findings, findingsOmitted: omitted, lastTime,
  };
}
