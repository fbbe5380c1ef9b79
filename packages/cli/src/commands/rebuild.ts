/**
 * `rebuild <exec>`: fold the journal into state (format §4.4). Prints a summary by default, the
 * state.json bytes with `--stdout`, writes state.json (keeping `.bak`) only with `--write`.
 */
import { JournalError } from "@hankweave-journal/core";
import { inspectLock } from "@hankweave-journal/journal";
import {
  checkSavedState, foldExecution, onlyCopyError, savedStateIsOnlyCopy, serializeState, summarizeState, writeStateText,
  type ExecutionFold, type FieldSource,
} from "@hankweave-journal/state";
import { parseCommandArgs } from "../args.js";
import { printErrorFindings } from "../finding-lines.js";
import { escapeTerminalText } from "../terminal-text.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface RebuildArgs {
  exec: string;
  mode: "summary" | "stdout" | "write";
  json: boolean;
  carry: boolean;
}

const HELP = `usage: hankweave-journal rebuild <exec> [--stdout | --write] [--json] [--no-carry]

Fold the journal's state.transition events (and plan.updated) into state, as state.json would be.
Journals written by the reference runtime carry no executionPlan and stamp run times with the wall
clock: codon times are taken exactly from codon.started / state.snapshot, executionPlan and run
times are carried from the existing state.json (or .bak) when it is of the same execution, else
approximated from line timestamps. Every carried or approximated field is reported.

  (default)    print a summary: runs, codons, outcomes, costs, and how the saved state.json compares
  --stdout     print the rebuilt state.json bytes exactly (JSON, 2-space indent, no trailing newline)
  --write      write state.json atomically (the previous file is kept as state.json.bak), refused
               with LOCK_HELD while a live runtime holds runtime.lock (LOCK_INVALID: unreadable); nothing
               is written when it is already identical
  --json       a report {exec, origin, transitions, lastLine, stateFile, differences, written,
               findings, carried, approximated, summary} (not with --stdout)
  --no-carry   do not carry anything from the saved state.json (see what the journal alone gives;
               not with --write)

Examples:
  hankweave-journal rebuild ./runs/x
  hankweave-journal rebuild ./runs/x --stdout > state.json
  hankweave-journal rebuild ./runs/x --write
  hankweave-journal rebuild ./runs/x --json --no-carry

Exit codes: 0 ok, 1 error findings (dropped transitions, corrupt lines) or failure, 2 usage.`;

function fieldLines(title: string, list: FieldSource[]): string {
  if (list.length === 0) return "";
  return `${title}:\n${list.map((f) => `  ${f.path}  (${f.source}${f.line !== undefined ? ` line ${f.line}` : ""})\n`).join("")}`;
}

/** The summary text of a fold. */
export function summaryText(fold: ExecutionFold, stateFile: string, differences: string[]): string {
  const s = summarizeState(fold.state);
  const out: string[] = [];
  out.push(`journal: ${fold.origin}, ${fold.transitions} transitions, last state line ${fold.lastLine ?? "-"}\n`);
  for (const r of s.runs) {
    const outcomes = Object.entries(r.outcomes).map(([k, v]) => `${v} ${k}`).join(", ") || "no codons";
    out.push(`run ${r.runId}  ${r.status}  ${r.codons} codons (${outcomes})  cost $${r.cost.toFixed(6)}\n`);
  }
  out.push(`total cost $${s.totalCost.toFixed(6)}; executionPlan ${s.executionPlanEntries} entries; currentRunId ${s.currentRunId ?? "null"}\n`);
  out.push(`state.json: ${stateFile}${differences.length ? ` (${differences.length} differing paths: ${differences.slice(0, 5).join(", ")}${differences.length > 5 ? ", …" : ""})` : ""}\n`);
  const bySeverity: Record<string, number> = {};
  for (const f of fold.findings) bySeverity[f.severity] = (bySeverity[f.severity] ?? 0) + 1;
  out.push(`findings: ${Object.entries(bySeverity).map(([k, v]) => `${v} ${k}`).join(", ") || "none"}\n`);
  out.push(fieldLines("carried from state.json", fold.carried.filter((f) => f.source === "state.json")));
  out.push(fieldLines("approximated", fold.approximated));
  return out.join("");
}

export const rebuildCommand: Command<RebuildArgs> = {
  name: "rebuild",
  summary: "fold the journal into state.json (summary, --stdout, or --write keeping .bak)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      stdout: { type: "boolean" }, write: { type: "boolean" }, json: { type: "boolean" }, "no-carry": { type: "boolean" },
    }, { min: 1, max: 1 });
    if (p.values.stdout && p.values.write) throw new JournalError("USAGE", "--stdout and --write are exclusive");
    if (p.values.stdout && p.values.json) throw new JournalError("USAGE", "--stdout and --json are exclusive (both write stdout)");
    if (p.values.write && p.values["no-carry"]) {
      throw new JournalError("USAGE", "--write always carries what the journal cannot give (executionPlan, run times); drop --no-carry");
    }
    return {
      exec: p.positionals[0],
      mode: p.values.stdout ? "stdout" : p.values.write ? "write" : "summary",
      json: Boolean(p.values.json),
      carry: !p.values["no-carry"],
    };
  },
  async run(args, io: CliIO, ctx) {
    const layout = execLayout(ctx);
    const exec = layout.exec;
    const fold = await foldExecution(layout, { signal: io.signal, carry: args.carry });
    const errors = fold.findings.filter((f) => f.severity === "error").length;
    if (args.mode === "stdout") {
      await io.stdout(serializeState(fold.state));
      printErrorFindings(io, fold.findings);
      return errors > 0 ? 1 : 0;
    }
    const check = checkSavedState(layout, fold, fold.savedStates);
    let written = false;
    if (args.mode === "write" && check.rewrite) {
      if (savedStateIsOnlyCopy(fold, fold.savedStates)) throw onlyCopyError(layout);
      // A live runtime rewrites state.json itself: writing beside it would race (LOCK_HELD / LOCK_INVALID).
      const lock = await inspectLock(layout);
      if (lock.state === "live" || lock.state === "invalid") {
        throw new JournalError(lock.state === "live" ? "LOCK_HELD" : "LOCK_INVALID", `refusing to write state.json: ${lock.reason}`, { path: layout.lock }, {
          hint: "stop the runtime first (or remove a runtime.lock you know is stale)",
        });
      }
      await writeStateText(layout, serializeState(fold.state));
      written = true;
    }
    const { stateFile, differences } = check.report;
    if (args.json) {
      await io.stdout(JSON.stringify({
        exec, origin: fold.origin, transitions: fold.transitions, lastLine: fold.lastLine, stateFile, differences, written,
        findings: fold.findings, carried: fold.carried, approximated: fold.approximated, summary: summarizeState(fold.state),
      }) + "\n");
    } else {
      await io.stdout(escapeTerminalText(summaryText(fold, stateFile, differences)));
      if (args.mode === "write") io.stderr(written ? `wrote ${exec}/.hankweave/state.json (previous kept as state.json.bak)\n` : "state.json already identical: nothing written\n");
    }
    printErrorFindings(io, fold.findings);
    return errors > 0 ? 1 : 0;
  },
};
