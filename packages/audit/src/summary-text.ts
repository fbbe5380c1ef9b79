/**
 * The text form of `summary`: one screen per execution. Attempts are shown by group (a codon with
 * its retries or loop iterations on one line); every failed, crashed or skipped attempt gets its
 * own line with the reason and the journal line to look at. Pure.
 */
import { escapeTerminal } from "@hankweave-journal/core";
import { formatUsd } from "./audit-summary.js";
import { formatOutcomes } from "./outcomes.js";
import { formatDuration } from "./report-svg.js";
import type { ExecutionSummary, SummaryAttempt, SummaryRun } from "./summary.js";

function dur(ms: number | null): string {
  return ms === null ? "not ended" : formatDuration(ms);
}

function problemLine(a: SummaryAttempt): string {
  const it = a.loop !== null && !/#\d+$/.test(a.codon) ? `#${a.loop.iteration}` : "";
  const retry = a.attempt > 1 ? ` attempt ${a.attempt}` : "";
  return `      ${a.outcome.padEnd(9)} ${escapeTerminal(a.codon)}${it}${retry}: ${escapeTerminal(a.reason ?? "")} → line ${a.line}`;
}

function runText(r: SummaryRun, n: number): string[] {
  const out: string[] = [];
  out.push(
    `run ${n} ${escapeTerminal(r.run)}  ${r.status}  started ${r.startTime}  ${dur(r.durationMs)}  ` +
      `${formatUsd(r.cost)}  ${r.tokenTotal.toLocaleString("en-US")} tokens  lines ${r.startLine ?? "?"}–${r.endLine ?? "…"}`,
  );
  out.push(`  ${r.attempts.length} codon attempts: ${formatOutcomes(r.outcomes)}`);
  const width = Math.min(40, Math.max(8, ...r.groups.map((g) => g.label.length)));
  for (const g of r.groups) {
    const members = g.members.map((i) => r.attempts[i]);
    const extra: string[] = [];
    if (g.iterations > 1) extra.push(`${g.iterations} iterations`);
    if (g.retries > 0) extra.push(`${g.retries} ${g.retries === 1 ? "retry" : "retries"}`);
    const what = members.length === 1 ? members[0].outcome : formatOutcomes(g.outcomes);
    const time = members.length === 1 ? dur(members[0].durationMs) : formatDuration(g.durationMs);
    out.push(`    ${escapeTerminal(g.label).padEnd(width)}  ${what.padEnd(22)}  ${time.padStart(8)}  ${formatUsd(g.cost)}${extra.length ? `  (${extra.join(", ")})` : ""}`);
    for (const a of members) if (a.reason !== null) out.push(problemLine(a));
  }
  return out;
}

/**
 * The summary as text (ends with a newline).
 * @example process.stdout.write(formatSummary(await summarizeExecution(exec)))
 */
export function formatSummary(s: ExecutionSummary): string {
  const f = s.findings;
  const lines = [
    `${escapeTerminal(s.exec)} (${s.kind} journal): ${s.events.toLocaleString("en-US")} events, ${s.transitions.toLocaleString("en-US")} transitions, ` +
      `${s.runs.length} run(s), total cost ${formatUsd(s.totalCost)}; findings: ${f.error} errors, ${f.warning} warnings, ${f.info} info`,
  ];
  s.runs.forEach((r, i) => lines.push(...runText(r, i + 1)));
  const codes = Object.entries(s.byCode);
  if (codes.length > 0) lines.push(`findings by code: ${codes.map(([c, n]) => `${c}×${n}`).join(", ")} (see: hankweave-journal audit)`);
  return lines.join("\n") + "\n";
}
