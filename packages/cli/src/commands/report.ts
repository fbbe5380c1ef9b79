/**
 * `report <exec> -o report.html`: one self-contained HTML page (timeline, cost, tokens, findings).
 */
import * as path from "node:path";
import { JournalError } from "@hankweave-journal/core";
import { collectReportData, renderReportHtml, writeReport } from "@hankweave-journal/audit";
import { checkOutputPath } from "@hankweave-journal/journal";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface ReportArgs {
  exec: string;
  out: string;
  json: boolean;
}

const HELP = `usage: hankweave-journal report <exec> -o <file.html> [--json]

Writes ONE self-contained HTML file (inline CSS and SVG; no script, no network, no external asset):
per run, a timeline of codon attempts as bars coloured by outcome (completed, failed, skipped,
running, crashed; loop iterations labelled name#n, retries "attempt n"), the cumulative cost over
time, token totals, and the audit findings with their line numbers. The journal is only read.

  -o, --out FILE   where to write the page (required; - for stdout). Refused with OUTPUT_IN_EXECUTION
                   inside any execution's .hankweave/, with NOT_A_REGULAR_FILE onto a directory,
                   device or FIFO (symlinks are resolved first)
  --json           print {path, bytes, runs, attempts, findings}

Examples:
  hankweave-journal report ./runs/x -o report.html --json
  hankweave-journal report ./runs/x --out - | gzip > report.html.gz

Exit codes: 0 written, 1 failure, 2 usage.`;

export const reportCommand: Command<ReportArgs> = {
  name: "report",
  summary: "write a self-contained HTML report (timeline, cost, tokens, findings)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { out: { type: "string", short: "o" }, json: { type: "boolean" } }, { min: 1, max: 1 });
    if (typeof p.values.out !== "string" || p.values.out.length === 0) throw new JournalError("USAGE", "report needs -o <file.html>");
    return { exec: p.positionals[0], out: p.values.out, json: p.values.json === true };
  },
  async run(args, io, ctx) {
    const layout = execLayout(ctx);
    const target = await checkOutputPath(args.out, io.cwd);
    if (target.kind === "stdout") {
      if (args.json) throw new JournalError("USAGE", "-o - and --json both write stdout");
      await io.stdout(renderReportHtml(await collectReportData(layout)));
      return 0;
    }
    const r = await writeReport(layout, target.path);
    if (args.json) await io.stdout(JSON.stringify(r) + "\n");
    else await io.stdout(`report: ${r.runs} run(s), ${r.attempts} codon attempts, ${r.findings} findings, ${r.bytes} bytes → ${r.path}\n`);
    return 0;
  },
};
