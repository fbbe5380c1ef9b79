/**
 * The self-contained HTML report: inline CSS and SVG only (no script, no network, no external
 * asset), readable by someone who has never seen the journal format.
 */
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { JournalError, type TokenUsage } from "@hankweave-journal/core";
import { checkOutputPath } from "@hankweave-journal/journal";
import { AUDIT_CODES, type AuditCodeInfo } from "./audit-codes.js";
import type { AttemptOutcome, RunSummary } from "./audit-types.js";
import { collectReportData, type ReportData } from "./report-data.js";
import { OUTCOME_COLORS, attemptLabel, costSvg, esc, formatDuration, money, timelineSvg } from "./report-svg.js";

const CSS = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa}
*{box-sizing:border-box}body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);margin:0;background:#fff}
header{padding:20px 28px;background:var(--bg);border-bottom:1px solid var(--line)}h1{font-size:20px;margin:0 0 4px}
h2{font-size:17px;margin:0 0 6px}h3{font-size:14px;margin:18px 0 6px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
main{padding:8px 28px 40px;max-width:1280px}.sub{color:var(--muted)}code{font:12px ui-monospace,Menlo,Consolas,monospace}
.badges span{display:inline-block;margin:8px 8px 0 0;padding:2px 10px;border-radius:12px;background:#fff;border:1px solid var(--line)}
.badges .error{border-color:#d64545;color:#b42318}.badges .warning{border-color:#d4a72c;color:#8a5a00}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:14px 0}.legend span{display:inline-flex;align-items:center;gap:6px}
.legend i{display:inline-block;width:22px;height:12px;border-radius:3px}
section.run{border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:18px 0}
table{border-collapse:collapse;font-size:13px}th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{background:var(--bg)}td.num{text-align:right;font-variant-numeric:tabular-nums}
svg text{font:12px system-ui,sans-serif;fill:var(--fg)}svg .tick{fill:var(--muted);font-size:11px}svg .barnote{fill:var(--muted);font-size:11px}
svg .grid{stroke:#eaeef2;stroke-width:1}svg .stripe{fill:#f6f8fa}svg .open{stroke:#1d4ed8;stroke-dasharray:4 3;stroke-width:1.5}
svg .area{fill:#3b82f6;fill-opacity:.12}svg .line{fill:none;stroke:#2563eb;stroke-width:2}svg .dot{fill:#2563eb}
svg g[data-codon-attempt]:hover rect{stroke:#111;stroke-width:1.5}
.sev-error{color:#b42318;font-weight:600}.sev-warning{color:#8a5a00;font-weight:600}.sev-info{color:var(--muted)}
.howto{color:var(--muted);max-width:900px}.ok{color:#2e7d32;font-weight:600}
`;

const OUTCOME_TEXT: Record<AttemptOutcome, string> = {
  completed: "completed", failed: "failed", skipped: "skipped", running: "still running / never ended", crashed: "crashed (server died)",
};

function tokenRow(label: string, t: TokenUsage): string {
  const total = t.inputTokens + t.outputTokens + t.cacheCreationTokens + t.cacheReadTokens;
  return `<tr><td>${esc(label)}</td>${[t.inputTokens, t.outputTokens, t.cacheCreationTokens, t.cacheReadTokens, total]
    .map((n) => `<td class="num">${n.toLocaleString("en-US")}</td>`).join("")}</tr>`;
}

function runSection(run: RunSummary, data: ReportData): string {
  const end = run.endTime ?? data.lastTime;
  const duration = end !== null ? formatDuration(Date.parse(end) - Date.parse(run.startTime)) : "?";
  const counts = new Map<AttemptOutcome, number>();
  for (const a of run.attempts) counts.set(a.outcome, (counts.get(a.outcome) ?? 0) + 1);
  const outcomeText = [...counts].map(([o, n]) => `${n} ${o}`).join(", ") || "no codon attempts";
  const perCodon = run.attempts.map((a) => tokenRow(attemptLabel(a), a.tokens)).join("");
  const runFindings = data.findings.filter((f) => f.run === run.run);
  return `<section class="run" id="run-${esc(run.run)}">
<h2>Run <code>${esc(run.run)}</code> — ${esc(run.status)}</h2>
<div class="sub">started ${esc(run.startTime)}${run.endTime ? `, ended ${esc(run.endTime)}` : ", not ended"} · ${esc(duration)} ·
${run.attempts.length} codon attempts (${esc(outcomeText)}) · cost <b>${esc(money(run.cost))}</b> ·
journal lines ${run.startLine ?? "?"}–${run.endLine ?? "…"} · ${runFindings.length} findings</div>
<h3>Timeline of codon attempts</h3>
${run.attempts.length > 0 ? timelineSvg(run, data.lastTime, data.costSeries[run.run] ?? []) : `<p class="sub">No codon was started in this run.</p>`}
<h3>Cumulative cost</h3>
${costSvg(run, data.costSeries[run.run] ?? [], data.lastTime)}
<h3>Tokens</h3>
<table><tr><th>codon attempt</th><th>input</th><th>output</th><th>cache creation</th><th>cache read</th><th>total</th></tr>
${perCodon}${tokenRow("run total", run.tokens)}</table>
</section>`;
}

function findingsSection(data: ReportData): string {
  const total = data.findingCounts.error + data.findingCounts.warning + data.findingCounts.info;
  if (total === 0) return `<h2>Audit findings</h2><p class="ok">No findings: every line parsed and every transition recomputed exactly.</p>`;
  const codes = AUDIT_CODES as Record<string, AuditCodeInfo>;
  // Errors first, then warnings, then info; by line within each.
  const rank = { error: 0, warning: 1, info: 2 } as const;
  const sorted = [...data.findings].sort((a, b) => rank[a.severity] - rank[b.severity] || a.line - b.line);
  const rows = sorted.map((f) => `<tr><td class="sev-${f.severity}">${esc(f.severity)}</td>
<td class="num">${f.line}</td><td><code title="${esc(codes[f.code]?.meaning ?? "")}">${esc(f.code)}</code></td>
<td><code>${esc(f.codon ?? "")}</code></td><td>${esc(f.message.replace(/^line \d+: /, ""))}</td></tr>`).join("");
  return `<h2>Audit findings</h2>
<p class="sub">${data.findingCounts.error} errors, ${data.findingCounts.warning} warnings, ${data.findingCounts.info} info.
Errors first, then warnings, then info. "line" is the line number in <code>events.jsonl</code>, counted from 0. Hover a code for its meaning.
${data.findingsOmitted > 0 ? `${data.findingsOmitted} more findings are not listed here (run <code>hankweave-journal audit</code>).` : ""}</p>
<table><tr><th>severity</th><th>line</th><th>code</th><th>codon</th><th>what</th></tr>${rows}</table>`;
}

/**
 * The report page for `data`. Pure; deterministic for the same data.
 * @example const html = renderReportHtml(await collectReportData("/runs/x"));
 */
export function renderReportHtml(data: ReportData): string {
  const runs = [...data.runs].reverse(); // newest run first, like state.json
  const totalCost = data.runs.reduce((s, r) => s + r.cost, 0);
  const legend = (Object.keys(OUTCOME_COLORS) as AttemptOutcome[])
    .map((o) => `<span><i style="background:${OUTCOME_COLORS[o]}"></i>${esc(OUTCOME_TEXT[o])}</span>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Hankweave execution report — ${esc(path.basename(data.exec))}</title><style>${CSS}</style></head>
<body><header><h1>Hankweave execution report</h1>
<div class="sub"><code>${esc(data.exec)}</code> · ${data.kind} journal · ${data.events.toLocaleString("en-US")} events ·
${data.transitions.toLocaleString("en-US")} state transitions · ${data.runs.length} run(s) · total cost <b>${esc(money(totalCost))}</b></div>
<div class="badges"><span class="error">${data.findingCounts.error} errors</span><span class="warning">${data.findingCounts.warning} warnings</span><span>${data.findingCounts.info} info</span></div>
</header><main>
<p class="howto">Each run below shows its <b>codon attempts</b> (one bar per attempt, from when it started to when it ended;
loop iterations are labelled <code>name#n</code> and retries <code>attempt n</code>), the run's <b>cumulative cost</b> in US dollars over
the same time axis, and its <b>token</b> usage. Hover a bar for details and the journal lines it spans.</p>
<div class="legend">${legend}</div>
${runs.map((r) => runSection(r, data)).join("\n")}
${findingsSection(data)}
</main></body></html>
`;
}

/** What `writeReport` wrote. */
export interface ReportResult {
  path: string;
  bytes: number;
  runs: number;
  attempts: number;
  findings: number;
}

/**
 * Audit `exec` and write the report to `outPath` (temp file + rename; the journal is only read).
 * @example await writeReport("/runs/x", "/tmp/report.html") // {path, bytes, runs, attempts, findings}
 */
export async function writeReport(exec: string, outPath: string): Promise<ReportResult> {
  // Never over a journal, a state file or a device (a path spelled "-" is a file here: the CLI maps it to stdout).
  const target = await checkOutputPath(path.resolve(outPath), "/");
  if (target.kind === "file") outPath = target.path;
  const data = await collectReportData(exec);
  const html = renderReportHtml(data);
  const tmp = `${outPath}.tmp-${process.pid}`;
  try {
    await fsp.writeFile(tmp, html);
    await fsp.rename(tmp, outPath);
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw new JournalError("IO_ERROR", `cannot write ${outPath}: ${(e as Error).message}`, { path: outPath }, { cause: e });
  }
  return {
    path: outPath,
    bytes: Buffer.byteLength(html),
    runs: data.runs.length,
    attempts: data.runs.reduce((n, r) => n + r.attempts.length, 0),
    findings: data.findingCounts.error + data.findingCounts.warning + data.findingCounts.info,
  };
}
