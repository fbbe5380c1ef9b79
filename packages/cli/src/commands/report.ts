/**
 * `report <exec> -o report.html`: one self-contained HTML page (timeline, cost, tokens, findings).
 */
import * as path from "node:path";
import { JournalError } from "@hankweave-journal/core";
import { writeReport } from "@hankweave-journal/audit";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";

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

  -o, --out FILE   where to write the page (required)
  --json           print {path, bytes, runs, attempts, findings}

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
  async run(args, io) {
    const out = path.resolve(io.cwd, args.out);
    const r = await writeReport(args.exec, out);
    if (args.json) await io.stdout(JSON.stringify(r) + "\n");
    else await io.stdout(`report: ${r.runs} run(s), ${r.attempts} codon attempts, ${r.findings} findings, ${r.bytes} bytes → ${r.path}\n`);
    return 0;
  },
};
