/**
 * `summary <exec>`: what happened, on one screen: each run (status, start, duration, cost,
 * tokens), its codon attempts grouped by codon (retries, loop iterations), and the reason and
 * journal line of every failed, crashed or skipped attempt.
 */
import { formatSummary, severityOf, summarizeExecution } from "@hankweave-journal/audit";
import { parseCommandArgs } from "../args.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface SummaryArgs {
  exec: string;
  json: boolean;
}

const HELP = `usage: hankweave-journal summary <exec> [--json]

One screen per execution, from one streaming pass over the journal (plain or dieted): each run,
oldest first, with its status, start time, duration, cost and tokens; then its codon attempts in
the order they started, a codon's retries and loop iterations grouped on one line
("implement#0..#4  4 completed, 1 failed"); under each group, every failed, crashed or skipped
attempt with its reason and the journal line to look at ("→ line 812"; line numbers count from 0).
Outcomes are counted exactly as audit, report and the main job count them.

  --json   the same content as one object {exec, kind, events, transitions, findings, byCode,
           totalCost, runs: [{run, status, startTime, endTime, durationMs, cost, tokens,
           tokenTotal, startLine, endLine, outcomes, attempts: [...], groups: [...]}]}

Examples:
  hankweave-journal summary ./my-exec
  hankweave-journal summary ./my-exec --json | jq '.runs[].groups[].label'

Exit codes: 0 no error findings, 1 error findings or failure, 2 usage.`;

export const summaryCommand: Command<SummaryArgs> = {
  name: "summary",
  summary: "what happened: runs, codon attempts grouped, reasons of failures with their lines",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], json: p.values.json === true };
  },
  async run(args, io: CliIO, ctx) {
    const s = await summarizeExecution(execLayout(ctx), io.signal);
    await io.stdout(args.json ? JSON.stringify(s) + "\n" : formatSummary(s));
    if (s.findings.error === 0) return 0;
    // The codes of the error findings on stderr (the details are `audit`'s).
    for (const [code, n] of Object.entries(s.byCode)) if (severityOf(code) === "error") io.stderr(`error ${code}: ${n} finding(s) (see: hankweave-journal audit)\n`);
    return 1;
  },
};
