/**
 * `state <exec> [--at <line | event id | ISO time>]`: the state as of a point of the journal,
 * inclusive — the fold of a prefix of the journal (format §4.4).
 */
import { openReader } from "@hankweave-journal/diet";
import {
  foldJournal, parseCursor, readSavedStates, savedStateOf, serializeState, stateAt, type Cursor,
} from "@hankweave-journal/state";
import { parseCommandArgs } from "../args.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface StateArgs {
  exec: string;
  at: Cursor | null;
  atText: string | null;
  json: boolean;
  carry: boolean;
}

const HELP = `usage: hankweave-journal state <exec> [--at <line | event id | ISO time>] [--json] [--no-carry]

Print the state as of a point of the journal: the fold of every line up to and INCLUDING it.
Without --at: as of the last line.

  --at N       a line number (from 0, blank and corrupt lines counted): lines 0..N.
               Past the last line: error LINE_OUT_OF_RANGE.
  --at ID      an event id (e.g. 1772736420200-b2y6pzssd): up to and including the FIRST line
               with that id (ids are not unique). No such line: error BAD_CURSOR.
  --at TIME    an ISO time (2026-03-05T18:47:00.200Z; a date alone or a time without zone is
               UTC): every line up to the first line whose timestamp is later than TIME,
               exclusive. Lines are in file order, not time order: if timestamps go backwards,
               a later line stamped at or before TIME is NOT included (it was written after a
               line stamped later than TIME); --json reports how many such lines exist.
  --json       {exec, at, kind, line, laterLinesAtOrBefore, origin, transitions, state,
               resultingState, findings, carried, approximated}
  --no-carry   do not carry run times / executionPlan from the saved state.json (foreign journals)

Output without --json: the state as state.json would hold it (2-space JSON) plus a newline.
Examples:
  hankweave-journal state ./runs/x --at 1200
  hankweave-journal state ./runs/x --at 2026-01-05T10:00:00.000Z --json
  hankweave-journal state ./runs/x --no-carry

Exit codes: 0 ok, 1 failure (bad cursor, unreadable journal), 2 usage.`;

export const stateCommand: Command<StateArgs> = {
  name: "state",
  summary: "the state as of a line, event id or ISO time (inclusive)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { at: { type: "string" }, json: { type: "boolean" }, "no-carry": { type: "boolean" } }, { min: 1, max: 1 });
    const atText = typeof p.values.at === "string" ? p.values.at : null;
    return { exec: p.positionals[0], at: atText === null ? null : parseCursor(atText), atText, json: Boolean(p.values.json), carry: !p.values["no-carry"] };
  },
  async run(args, io: CliIO, ctx) {
    const layout = execLayout(ctx);
    const exec = layout.exec;
    const saved = args.carry ? savedStateOf(await readSavedStates(layout)) : null;
    const reader = await openReader(layout);
    try {
      const r = args.at === null
        ? { ...(await foldJournal(reader, { saved, signal: io.signal })), resolved: { toLine: -1, laterLinesAtOrBefore: 0 } }
        : await stateAt(reader, args.at, { saved });
      const line = args.at === null ? r.lastLine : r.resolved.toLine;
      if (args.json) {
        await io.stdout(JSON.stringify({
          exec, at: args.atText, kind: args.at?.kind ?? "end", line, laterLinesAtOrBefore: r.resolved.laterLinesAtOrBefore,
          origin: r.origin, transitions: r.transitions, state: r.state, resultingState: r.resultingState,
          findings: r.findings, carried: r.carried, approximated: r.approximated,
        }) + "\n");
      } else {
        await io.stdout(serializeState(r.state) + "\n");
        if (r.resolved.laterLinesAtOrBefore > 0) {
          io.stderr(`note: ${r.resolved.laterLinesAtOrBefore} later line(s) are stamped at or before ${args.atText} (timestamps went backwards); not included\n`);
        }
      }
      return 0;
    } finally {
      await reader.close();
    }
  },
};
