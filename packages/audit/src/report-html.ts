/**
 * The self-contained HTML report: inline CSS and SVG only (no script, no network, no external
 * asset), readable by someone who has never seen the journal format.
 */
import * as path from "node:path";
import type { TokenUsage } from "@hankweave-journal/core";
import { checkOutputPath, writeFileDurable } from "@hankweave-journal/journal";
import { AUDIT_CODES, type AuditCodeInfo } from "./audit-codes.js";
import type { AttemptOutcome, AuditFinding, CodonAttempt, RunSummary } from "./audit-types.js";
import { formatOutcomes, tokenTotal } from "./outcomes.js";
import { summaryRunOf, type SummaryGroup } from "./summary.js";
import { collectReportData, type ReportData } from "./report-data.js";
import { OUTCOME_COLORS, attemptLabel, clipText, costSvg, esc, formatDuration, money, timelineSvg } from "./report-svg.js";
import { type ExecRef } from "@hankweave-journal/core";

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
svg g[data-codon-attempt]:hover rect{stroke:#111;stroke-width:1.5}svg .inbar{fill:#fff;font-size:11px}
svg .drop{stroke:#b42318;stroke-dasharray:3 3}svg .dropnote{fill:#b42318;font-size:11px}
.pill{display:inline-block;padding:0 8px;border-radius:9px;color:#fff;font-size:12px}.reason{color:#b42318}
ul.problems{margin:4px 0 8px;padding-left:20px}ul.problems li{margin:2px 0}
details{margin:4px 0}details>summary{cursor:pointer;padding:3px 0}details.group>table,details.findings>table{margin:4px 0 8px 18px}
table.attempts{margin:2px 0}table.attempts td:first-child{min-width:220px}.costrule{max-width:1000px}
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

const REASON_CHARS = 300;
/** Findings listed per code inside its details (the rest are counted). */
const FINDINGS_PER_CODE = 50;
/** Line numbers shown next to a code. */
const FIRST_LINES = 5;

function attemptRow(a: CodonAttempt, last: string | null): string {
  const end = a.endTime ?? last;
  const dur = end !== null ? formatDuration(Date.parse(end) - Date.parse(a.startTime)) : "?";
  return `<tr class="o-${a.outcome}"><td>${esc(attemptLabel(a))}</td><td><span class="pill" style="background:${OUTCOME_COLORS[a.outcome]}">${esc(a.outcome)}</span></td>` +
    `<td class="num">${esc(dur)}${a.endTime === null ? " (not ended)" : ""}</td><td class="num">${esc(money(a.cost))}</td>` +
    `<td class="num">${tokenTotal(a.tokens).toLocaleString("en-US")}</td><td class="num">${a.startLine}–${a.endLine ?? "…"}</td>` +
    `<td class="reason">${a.reason !== null ? esc(clipText(a.reason, REASON_CHARS)) : ""}</td></tr>`;
}

const ATTEMPT_HEAD = `<tr><th>attempt</th><th>outcome</th><th>duration</th><th>cost</th><th>tokens</th><th>journal lines</th><th>reason</th></tr>`;

function groupBlock(run: RunSummary, g: SummaryGroup, last: string | null): string {
  const ms = g.members.map((k) => run.attempts[k]);
  if (ms.length === 1) return `<table class="attempts">${attemptRow(ms[0], last)}</table>`;
  const extra = [g.iterations > 1 ? `${g.iterations} loop iterations` : "", g.retries > 0 ? `${g.retries} ${g.retries === 1 ? "retry" : "retries"}` : ""].filter(Boolean).join(", ");
  return `<details class="group" data-group="${esc(g.label)}"><summary><b>${esc(g.label)}</b>: ${esc(formatOutcomes(g.outcomes))} · ${esc(formatDuration(g.durationMs))} · ${esc(money(g.cost))}` +
    `${extra ? ` (${esc(extra)})` : ""}</summary><table class="attempts">${ATTEMPT_HEAD}${ms.map((a) => attemptRow(a, last)).join("")}</table></details>`;
}

function runSection(run: RunSummary, data: ReportData): string {
  const s = summaryRunOf(run);
  const end = run.endTime ?? data.lastTime;
  const duration = end !== null ? formatDuration(Date.parse(end) - Date.parse(run.startTime)) : "?";
  const runFindings = data.findings.filter((f) => f.run === run.run);
  const problems = run.attempts.filter((a) => a.reason !== null);
  const series = data.costSeries[run.run] ?? [];
  const perCodon = run.attempts.map((a) => tokenRow(attemptLabel(a), a.tokens)).join("");
  return `<section class="run" id="run-${esc(run.run)}">
<h2>Run <code>${esc(run.run)}</code> — ${esc(run.status)}</h2>
<div class="sub">started ${esc(run.startTime)}${run.endTime ? `, ended ${esc(run.endTime)}` : ", not ended"} · ${esc(duration)} ·
${run.attempts.length} codon attempts (${esc(formatOutcomes(s.outcomes, "none"))}) · cost <b>${esc(money(run.cost))}</b> ·
journal lines ${run.startLine ?? "?"}–${run.endLine ?? "…"} · ${runFindings.length} findings</div>
${problems.length > 0 ? `<h3>Not completed</h3><ul class="problems">${problems.map((a) => `<li><span class="pill" style="background:${OUTCOME_COLORS[a.outcome]}">${esc(a.outcome)}</span> <b>${esc(attemptLabel(a))}</b>: <span class="reason">${esc(clipText(a.reason ?? "", REASON_CHARS))}</span> — journal line <code>${a.endLine ?? a.startLine}</code></li>`).join("")}</ul>` : ""}
<h3>Timeline of codon attempts</h3>
${run.attempts.length > 0 ? timelineSvg(run, data.lastTime, series, s.groups) : `<p class="sub">No codon was started in this run.</p>`}
<h3>Codon attempts, grouped by codon</h3>
${run.attempts.length > 0 ? `<p class="sub">A codon's retries and loop iterations are one group: open it to see each attempt.</p>${s.groups.map((g) => groupBlock(run, g, data.lastTime)).join("\n")}` : ""}
<h3>Cumulative cost</h3>
<p class="sub costrule">The line counts each codon attempt as the runtime does: a completed attempt its final cost, a failed one its
partial cost, a running one its current cost; a <b>skipped</b> codon counts <b>0</b> whatever its tokens cost, so the line drops when a
codon is skipped (marked ▼ with the line that did it). Sentinel costs are not included.</p>
${costSvg(run, series, data.lastTime)}
<details class="tokens"><summary>Tokens (${run.attempts.length} attempts; run total ${tokenTotal(run.tokens).toLocaleString("en-US")})</summary>
<table><tr><th>codon attempt</th><th>input</th><th>output</th><th>cache creation</th><th>cache read</th><th>total</th></tr>
${perCodon}${tokenRow("run total", run.tokens)}</table></details>
</section>`;
}

function findingsSection(data: ReportData): string {
  const total = data.findingCounts.error + data.findingCounts.warning + data.findingCounts.info;
  if (total === 0) return `<h2>Audit findings</h2><p class="ok">No findings: every line parsed and every transition recomputed exactly.</p>`;
  const codes = AUDIT_CODES as Record<string, AuditCodeInfo>;
  const rank = { error: 0, warning: 1, info: 2 } as const;
  const byCode = new Map<string, AuditFinding[]>();
  for (const f of data.findings) {
    const list = byCode.get(f.code);
    if (list === undefined) byCode.set(f.code, [f]);
    else list.push(f);
  }
  // Errors first, then warnings, then info; by count within each.
  const groups = [...byCode].sort(([ca, a], [cb, b]) => rank[a[0].severity] - rank[b[0].severity] || (data.byCode[cb] ?? b.length) - (data.byCode[ca] ?? a.length) || ca.localeCompare(cb));
  const blocks = groups.map(([code, list]) => {
    const sorted = [...list].sort((a, b) => a.line - b.line);
    const count = data.byCode[code] ?? list.length;
    const firstLines = sorted.slice(0, FIRST_LINES).map((f) => f.line).join(", ");
    const rows = sorted.slice(0, FINDINGS_PER_CODE).map((f) => `<tr><td class="num">${f.line}</td><td><code>${esc(f.codon ?? "")}</code></td><td>${esc(f.message.replace(/^line \d+: /, ""))}</td></tr>`).join("");
    const more = count - Math.min(sorted.length, FINDINGS_PER_CODE);
    return `<details class="findings" data-code="${esc(code)}"><summary><span class="sev-${list[0].severity}">${esc(list[0].severity)}</span> <code>${esc(code)}</code> ×${count}` +
      ` — ${esc(codes[code]?.meaning ?? "")} · first lines ${esc(firstLines)}${count > FIRST_LINES ? ", …" : ""}</summary>` +
      `<table><tr><th>line</th><th>codon</th><th>what</th></tr>${rows}</table>${more > 0 ? `<p class="sub">${more} more (run <code>hankweave-journal audit --json</code>).</p>` : ""}</details>`;
  }).join("\n");
  return `<h2>Audit findings</h2>
<p class="sub">${data.findingCounts.error} errors, ${data.findingCounts.warning} warnings, ${data.findingCounts.info} info, grouped by code (errors first).
"line" is the line number in <code>events.jsonl</code>, counted from 0. Open a code to see its findings.
${data.findingsOmitted > 0 ? `${data.findingsOmitted} more findings are not listed here (run <code>hankweave-journal audit</code>).` : ""}</p>
${blocks}`;
}

/**
 * The report page for `data`. Pure; deterministic for the same data.
 * @example const html = renderReportHtml(await collectReportData("/runs/x"));
 */
export function renderReportHtml(data: ReportData): string {
  const runs = data.runs; // oldest first: the order they ran (outcomes.ts), as summary and audit list them
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
a codon's loop iterations <code>name#n</code> and retries <code>attempt n</code> share one row), each bar's duration and cost written
next to it, and why every failed, crashed or skipped attempt did not complete; then the attempts grouped by codon (open a group for
each attempt), the run's <b>cumulative cost</b> in US dollars over the same time axis, and its <b>token</b> usage. Runs are listed in
the order they ran. Hover a bar for its details and the journal lines it spans.</p>
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
export async function writeReport(exec: ExecRef, outPath: string): Promise<ReportResult> {
  // Never over a journal, a state file or a device (a path spelled "-" is a file here: the CLI maps it to stdout).
  const target = await checkOutputPath(path.resolve(outPath), "/");
  if (target.kind === "file") outPath = target.path;
  const data = await collectReportData(exec);
  const html = renderReportHtml(data);
  // The one durable write (temp + fsync + rename + fsync dir; NO_SPACE / READ_ONLY / … coded, no temp left).
  await writeFileDurable(outPath, html, { tmp: `${outPath}.tmp-${process.pid}` });
  return {
    path: outPath,
    bytes: Buffer.byteLength(html),
    runs: data.runs.length,
    attempts: data.runs.reduce((n, r) => n + r.attempts.length, 0),
    findings: data.findingCounts.error + data.findingCounts.warning + data.findingCounts.info,
  };
}
