/**
 * `blame <exec> <path>`: the journal line, event id, time and transition that last set a value of
 * the folded state; `--history` lists every line that changed it.
 */
import { JournalError, escapeTerminal, isJournalError } from "@hankweave-journal/core";
import { blameExecution, parseBlamePath, type BlameChange, type BlameResult } from "@hankweave-journal/audit";
import { parseCommandArgs } from "../args.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface BlameArgs {
  exec: string;
  path: string;
  history: boolean;
  json: boolean;
}

const HELP = `usage: hankweave-journal blame <exec> <path> [--history] [--json]

Which journal line made a value of the folded state (what rebuild gives) what it is: its line
number (from 0), event id, time and transition, in one streaming pass over a plain or dieted
journal. On a journal written by the reference runtime it says when the value was carried from
the saved state.json, approximated from a line's timestamp, or taken from codon.started /
state.snapshot data, rather than derived from the transition line.

<path>, index form (as in state.json; runs[0] is the newest run):
  currentRunId   runs[1].status   runs[0].codons[3].finalCost   runs[0].codons[3].finalTokens.inputTokens
  executionPlan   initialCheckpoint   runs[0].startTime
<path>, friendly form (by id; @n = the n-th attempt of that codon, from 1; without @ the latest):
  run:<runId>.status   run:<runId>/codon:<codonId>.finalCost   run:<runId>/codon:implement#2@1.partialCost

  --history   every line that changed the value, with the previous value and, for numbers, the
              delta (a cost: each increment and the running sum); for finalCost/partialCost
              (finalTokens/partialTokens) also every change of the currentCost (currentTokens)
              it was copied from
  --json      one object {exec, path, resolved, runId, codonId, value, journalValue, source, last,
              history, feeds, changes, origin}

Examples:
  hankweave-journal blame ./my-exec 'runs[0].codons[3].finalCost' --history
  hankweave-journal blame ./my-exec currentRunId --json

Exit codes: 0 found, 1 failure (BLAME_PATH_NOT_FOUND, no journal), 2 usage (also a path that does not
parse: BLAME_PATH_INVALID).`;

const MAX_VALUE_CHARS = 160;

function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return escapeTerminal(s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS - 1)}…` : s);
}

function changeLine(c: BlameChange): string {
  const what = c.transition === null ? c.eventType : `${c.transition}${c.edge !== null ? ` ${c.edge}` : ""}`;
  const delta = c.delta !== null ? `  (${c.delta >= 0 ? "+" : ""}${c.delta})` : "";
  return `  line ${String(c.line).padStart(7)}  ${c.time}  ${escapeTerminal(c.id).padEnd(24)}  ${escapeTerminal(what).padEnd(32)}  ${show(c.value)}${delta}\n`;
}

/** The text form of a blame result. */
export function blameText(b: BlameResult): string {
  const out: string[] = [];
  const who = [b.runId !== null ? `run ${escapeTerminal(b.runId)}` : null, b.codonId !== null ? `codon ${escapeTerminal(b.codonId)}` : null].filter(Boolean).join(", ");
  out.push(`${escapeTerminal(b.path)}${b.resolved !== b.path ? ` (${b.resolved})` : ""} = ${show(b.value)}${who ? `   [${who}]` : ""}\n`);
  if (b.last === null) out.push("never set by a journal line (the initial value)\n");
  else {
    const l = b.last;
    out.push(`set by line ${l.line} (byte ${l.offset}), event ${escapeTerminal(l.id)}, ${l.time}: ${l.eventType}` +
      `${l.transition !== null ? ` ${l.transition}` : ""}${l.edge !== null ? ` ${l.edge}` : ""}; previous value ${show(l.previous)}\n`);
  }
  if (b.source.kind !== "journal") {
    out.push(`note: ${b.source.note}; the journal's own value is ${show(b.journalValue)}\n`);
  }
  if (b.history.length > 0) {
    out.push(`history (${b.history.length} change${b.history.length === 1 ? "" : "s"}):\n`);
    for (const c of b.history) out.push(changeLine(c));
  }
  if (b.feeds !== null && b.feeds.history.length > 0) {
    out.push(`copied from ${b.feeds.path}, which changed on ${b.feeds.history.length} line(s) (value = running sum):\n`);
    for (const c of b.feeds.history) out.push(changeLine(c));
  }
  return out.join("");
}

export const blameCommand: Command<BlameArgs> = {
  name: "blame",
  summary: "which journal line set a value of the folded state (--history: every change)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { history: { type: "boolean" }, json: { type: "boolean" } }, { min: 2, max: 2 });
    try {
      parseBlamePath(p.positionals[1]);
    } catch (e) {
      // A path that does not parse is a usage error (exit 2); the library's code is BLAME_PATH_INVALID.
      if (isJournalError(e)) throw new JournalError("USAGE", `${e.message} (${e.code}); ${e.hint ?? ""}`);
      throw e;
    }
    return { exec: p.positionals[0], path: p.positionals[1], history: p.values.history === true, json: p.values.json === true };
  },
  async run(args, io: CliIO, ctx) {
    const b = await blameExecution(execLayout(ctx), args.path, { history: args.history, signal: io.signal });
    await io.stdout(args.json ? JSON.stringify(b) + "\n" : blameText(b));
    return 0;
  },
};
