/**
 * A compact, stable summary of an audit (what the main job prints at its end) and its text form.
 */
import type { TokenUsage } from "@hankweave-journal/core";
import { streamAudit, type AuditEnd, type AuditFilter } from "./audit-run.js";
import type { AttemptOutcome } from "./audit-types.js";
import { countOutcomes, formatOutcomes, tokenTotal } from "./outcomes.js";
import { type ExecRef } from "@hankweave-journal/core";

/** One run in a summary. */
export interface RunLine {
  run: string;
  status: string;
  attempts: number;
  outcomes: Record<AttemptOutcome, number>;
  cost: number;
  tokens: TokenUsage;
}

/** The summary object (`--json` friendly; keys stable). Runs oldest first, outcomes by `outcomes.ts`. */
export interface AuditSummary {
  exec: string;
  kind: "plain" | "dieted";
  events: number;
  transitions: number;
  findings: { error: number; warning: number; info: number };
  byCode: Record<string, number>;
  runs: RunLine[];
  totalCost: number;
  ok: boolean;
}

/** Reduce an audit end to its summary. Pure. */
export function summarizeAudit(end: AuditEnd): AuditSummary {
  const runs = end.runs.map((r) => {
    const outcomes = countOutcomes(r.attempts.map((a) => a.outcome));
    return { run: r.run, status: r.status, attempts: r.attempts.length, outcomes, cost: r.cost, tokens: r.tokens };
  });
  let totalCost = 0;
  for (const r of end.runs) totalCost += r.cost;
  return {
    exec: end.exec,
    kind: end.kind,
    events: end.events,
    transitions: end.transitions,
    findings: { ...end.findings },
    byCode: { ...end.byCode },
    runs,
    totalCost,
    ok: end.findings.error === 0,
  };
}

/** US-dollar amount with 4 decimals (`$0.0217`). */
export function formatUsd(v: number): string {
  return `$${v.toFixed(4)}`;
}

/**
 * The summary as a few human-readable lines (no trailing newline).
 * @example formatAuditSummary(s) // "audit: 148 events, 70 transitions, 0 errors, 0 warnings, 0 info\n  run …"
 */
export function formatAuditSummary(s: AuditSummary): string {
  const lines = [
    `audit ${s.exec} (${s.kind}): ${s.events} events, ${s.transitions} transitions, ` +
      `${s.findings.error} errors, ${s.findings.warning} warnings, ${s.findings.info} info; total cost ${formatUsd(s.totalCost)}`,
  ];
  for (const r of s.runs) {
    lines.push(`  run ${r.run} ${r.status}: ${r.attempts} codon attempts (${formatOutcomes(r.outcomes)}), cost ${formatUsd(r.cost)}, ${tokenTotal(r.tokens)} tokens`);
  }
  const codes = Object.entries(s.byCode);
  if (codes.length > 0) lines.push(`  findings: ${codes.map(([c, n]) => `${c}×${n}`).join(", ")}`);
  return lines.join("\n");
}

/**
 * Audit `exec` and return its summary plus the text form: one call for the main job.
 * @example const { summary, text } = await auditSummaryOf("/runs/x"); console.log(text);
 */
export async function auditSummaryOf(exec: ExecRef, filter: AuditFilter = {}): Promise<{ summary: AuditSummary; text: string }> {
  const summary = summarizeAudit(await streamAudit(exec, filter));
  return { summary, text: formatAuditSummary(summary) };
}
