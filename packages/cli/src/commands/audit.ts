/**
 * `audit <exec>`: every state.transition in line order with its costs, and the findings.
 * Exit 0 without error findings, 1 with (warnings and info do not fail).
 */
import { JournalError, isJournalError, type ExecLayout } from "@hankweave-journal/core";
import {
  formatUsd, streamAudit, summarizeAudit, type AuditFilter, type AuditFinding, type AuditRow,
} from "@hankweave-journal/audit";
import { FILTER_OPTIONS, filterFlags, parseCommandArgs } from "../args.js";
import { humanIO } from "../terminal-text.js";
import { printErrorFindings } from "../finding-lines.js";
import { ReportedError, type CliIO, type Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface AuditArgs extends AuditFilter {
  exec: string;
  format: "text" | "json" | "jsonl";
}

const HELP = `usage: hankweave-journal audit <exec> [--run ID] [--codon ID] [--from-line N] [--to-line N] [--json | --jsonl]

Every state.transition in line order: line, time, run, codon, transition, from→to, the codon's
cost and the run's cost after it; then the findings (each with its line and a stable code).
The fold always starts at line 0; filters select the rows and findings shown.

  --run ID        only rows/findings of this run (findings are attributed to the current run)
  --codon ID      only rows/findings of this codon
  --from-line N   only lines >= N;  --to-line N  only lines <= N (reading stops there)
  --json          one object {exec, kind, rows, findings, summary}
  --jsonl         one object per line: {"record":"row"|"finding"|"summary", ...}

Examples:
  hankweave-journal audit ./runs/x
  hankweave-journal audit ./runs/x --run run-2 --codon plan#0
  hankweave-journal audit ./runs/x --from-line 100 --to-line 500 --json
  hankweave-journal audit ./runs/x --jsonl | jq -c "select(.record == \"finding\")"

Exit codes: 0 no error findings, 1 error findings or failure, 2 usage.`;

/** `v` padded to `width`; never cut (a cut codon id `…-implement#1` would read as another attempt). */
function cell(v: string, width: number): string {
  return v.padEnd(width);
}

function money(v: number | null): string {
  return v === null ? "-" : v.toFixed(6);
}

function rowText(r: AuditRow): string {
  return [
    String(r.line).padStart(7), " ", cell(r.time, 24), " ", cell(r.run ?? "-", 20), " ", cell(r.codon ?? "-", 26), " ",
    cell(r.edge + (r.applied ? "" : " (dropped)"), 36), " ", money(r.codonCost).padStart(10), " ", money(r.runCost).padStart(10), "\n",
  ].join("");
}

function findingText(f: AuditFinding): string {
  return `${String(f.line).padStart(7)}  ${f.severity.padEnd(7)} ${f.code.padEnd(24)} ${f.message}\n`;
}

export const auditCommand: Command<AuditArgs> = {
  name: "audit",
  summary: "transitions in line order with costs, and findings (exit 1 on errors)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      ...FILTER_OPTIONS, json: { type: "boolean" }, jsonl: { type: "boolean" },
    }, { min: 1, max: 1 });
    if (p.values.json && p.values.jsonl) throw new JournalError("USAGE", "--json and --jsonl are exclusive");
    return { exec: p.positionals[0], format: p.values.json ? "json" : p.values.jsonl ? "jsonl" : "text", ...filterFlags(p.values) };
  },
  async run(args, io, ctx) {
    const layout = execLayout(ctx);
    const filter: AuditFilter = { run: args.run, codon: args.codon, fromLine: args.fromLine, toLine: args.toLine };
    if (args.format === "json") return runJson(args, layout, filter, io);
    if (args.format === "jsonl") {
      const end = await streamAudit(layout, filter, {
        row: (r) => io.stdout(JSON.stringify({ record: "row", ...r }) + "\n"),
        finding: (f) => io.stdout(JSON.stringify({ record: "finding", ...f }) + "\n"),
      }, io.signal);
      await io.stdout(JSON.stringify({ record: "summary", ...summarizeAudit(end) }) + "\n");
      return end.findings.error > 0 ? 1 : 0;
    }
    const findings: AuditFinding[] = [];
    io = humanIO(io);
    await io.stdout(`${"line".padStart(7)} ${cell("time", 24)} ${cell("run", 20)} ${cell("codon", 26)} ${cell("transition (from→to)", 36)} ${"codon $".padStart(10)} ${"run $".padStart(10)}\n`);
    const end = await streamAudit(layout, filter, { row: (r) => io.stdout(rowText(r)), finding: (f) => void findings.push(f) }, io.signal);
    const s = summarizeAudit(end);
    await io.stdout(`\nfindings (${findings.length}):\n`);
    for (const f of findings) await io.stdout(findingText(f));
    printErrorFindings(io, findings);
    await io.stdout(
      `\n${end.rows} rows of ${end.transitions} transitions, ${end.events} events (${end.kind}); ` +
        `${s.findings.error} errors, ${s.findings.warning} warnings, ${s.findings.info} info; total cost ${formatUsd(s.totalCost)}\n`,
    );
    return s.findings.error > 0 ? 1 : 0;
  },
};

async function runJson(args: AuditArgs, layout: ExecLayout, filter: AuditFilter, io: CliIO): Promise<number> {
  // Rows stream inside one JSON object; findings are kept (they are few) and printed after them.
  const findings: AuditFinding[] = [];
  let first = true;
  await io.stdout(`{"exec":${JSON.stringify(layout.exec)},"rows":[`);
  let end: Awaited<ReturnType<typeof streamAudit>>;
  try {
    end = await streamAudit(layout, filter, {
      row: (r) => {
        const s = (first ? "" : ",") + JSON.stringify(r);
        first = false;
        return io.stdout(s);
      },
      finding: (f) => void findings.push(f),
    }, io.signal);
  } catch (e) {
    // The object is open on stdout: close it with the error, so stdout stays one valid JSON value.
    if (!isJournalError(e)) throw e;
    await io.stdout(`],"findings":${JSON.stringify(findings)},"ok":false,"error":${JSON.stringify(e.toJSON())}}\n`);
    throw new ReportedError(e);
  }
  const summary = summarizeAudit(end);
  await io.stdout(`],"findings":${JSON.stringify(findings)},"summary":${JSON.stringify(summary)}}\n`);
  return summary.findings.error > 0 ? 1 : 0;
}
