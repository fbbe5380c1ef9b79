/**
 * `index <exec>`: build or update the derived SQLite index (`.hankweave/journal.index.sqlite`).
 */
import { buildIndex } from "@hankweave-journal/audit";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface IndexArgs {
  exec: string;
  full: boolean;
  json: boolean;
}

const HELP = `usage: hankweave-journal index <exec> [--full] [--json]

Builds the SQLite index of the journal (events, transitions, codon_attempts, runs, findings, meta)
into a temp file, fsyncs it and renames it to .hankweave/journal.index.sqlite. When an index exists
and the journal only grew, only the new lines are read; when the journal changed otherwise, the
index is rebuilt. The journal is never modified. Query it with \`hankweave-journal query\`.

  --full   rebuild from line 0 even when an incremental update is possible
  --json   print the result object {path, mode, reason, linesRead, eventsAdded, ...}

Examples:
  hankweave-journal index ./runs/x
  hankweave-journal index ./runs/x --full --json

Exit codes: 0 ok, 1 failure, 2 usage.`;

export const indexCommand: Command<IndexArgs> = {
  name: "index",
  summary: "build or update the SQLite index of the journal (incremental)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { full: { type: "boolean" }, json: { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], full: p.values.full === true, json: p.values.json === true };
  },
  async run(args, io, ctx) {
    const r = await buildIndex(execLayout(ctx), { full: args.full });
    if (args.json) {
      await io.stdout(JSON.stringify(r) + "\n");
      return 0;
    }
    const how = r.mode === "unchanged" ? "up to date" : r.mode === "full" ? `full build (${r.reason})` : "incremental update";
    await io.stdout(
      `index ${how}: read ${r.linesRead} lines (${r.bytesRead} bytes), +${r.eventsAdded} events, +${r.transitionsAdded} transitions, ` +
        `+${r.findingsAdded} findings; ${r.events} events in total; ${(r.ms / 1000).toFixed(2)} s → ${r.path}\n`,
    );
    return 0;
  },
};
