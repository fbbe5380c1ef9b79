/**
 * `diff <exec>`: the fold of the journal vs the saved state.json, as differing field paths
 * (`runs[0].codons[3].endTime`). Exit 1 when they differ (byte for byte).
 */
import { diffStates, foldExecution, serializeState, type StateDifference } from "@hankweave-journal/state";
import { parseCommandArgs } from "../args.js";
import { escapeTerminal } from "../terminal-text.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface DiffArgs {
  exec: string;
  json: boolean;
  carry: boolean;
}

const HELP = `usage: hankweave-journal diff <exec> [--json] [--no-carry]

Compare the fold of the journal (what \`rebuild --stdout\` prints) with the saved state.json and
list the field paths that differ, e.g. runs[0].codons[3].endTime. Key order counts (state.json is
compared byte for byte); a difference only in formatting is reported as "(formatting)".
For journals of the reference runtime, run times and executionPlan are carried from state.json
itself, so they never differ; --no-carry compares the journal alone.

  --json       {exec, stateFile, identical, differences: [{path, kind, fold, saved}], carried, approximated}
               kind: value | missing (absent in state.json) | extra (only in state.json) | key-order | file

Examples:
  hankweave-journal diff ./runs/x
  hankweave-journal diff ./runs/x --json --no-carry

Exit codes: 0 identical, 1 different (or state.json missing / corrupt) or failure, 2 usage.`;

function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

export const diffCommand: Command<DiffArgs> = {
  name: "diff",
  summary: "field paths where the journal's fold and state.json differ (exit 1 if any)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" }, "no-carry": { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], json: Boolean(p.values.json), carry: !p.values["no-carry"] };
  },
  async run(args, io: CliIO, ctx) {
    const layout = execLayout(ctx);
    const exec = layout.exec;
    const fold = await foldExecution(layout, { signal: io.signal, carry: args.carry });
    const main = fold.savedStates.main;
    let differences: StateDifference[];
    let stateFile: "ok" | "missing" | "corrupt";
    if (main.kind === "ok") {
      stateFile = "ok";
      differences = diffStates(fold.state, main.state);
      if (differences.length === 0 && serializeState(fold.state) !== main.text) {
        differences.push({ path: "(formatting)", kind: "value" });
      }
    } else {
      stateFile = main.kind;
      differences = [{ path: "(state.json)", kind: "missing" }];
    }
    if (args.json) {
      await io.stdout(JSON.stringify({
        exec, stateFile, identical: differences.length === 0,
        differences: differences.map((d) => ({ path: d.path, kind: d.kind === "missing" && d.path === "(state.json)" ? "file" : d.kind, fold: d.expected, saved: d.actual })),
        carried: fold.carried, approximated: fold.approximated,
      }) + "\n");
    } else if (differences.length === 0) {
      io.stderr("state.json is identical to the fold of the journal\n");
    } else {
      for (const d of differences) {
        const what = d.kind === "value" ? `fold ${show(d.expected)}  state.json ${show(d.actual)}`
          : d.kind === "missing" ? (d.path === "(state.json)" ? `state.json is ${stateFile}` : `only in the fold: ${show(d.expected)}`)
          : d.kind === "extra" ? `only in state.json: ${show(d.actual)}`
          : `key order: fold ${show(d.expected)}  state.json ${show(d.actual)}`;
        await io.stdout(`${escapeTerminal(d.path)}\t${escapeTerminal(what)}\n`);
      }
    }
    if (differences.length === 0) return 0;
    io.stderr(stateFile === "corrupt"
      ? `error STATE_CORRUPT: state.json cannot be parsed; compared with the fold it is missing\n`
      : `error STATE_MISMATCH: state.json ${stateFile === "missing" ? "is missing" : `differs from the fold of the journal at ${differences.length} path(s)`}\n`);
    return 1;
  },
};
