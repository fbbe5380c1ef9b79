/**
 * `hankweave-journal fleet <subcommand> …`: commands over many executions (issue 19). A dispatcher:
 * each subcommand is a `Command` in its own file, registered in FLEET_SUBCOMMANDS (one line each);
 * `fleet --help` shows every subcommand's help.
 */
import { JournalError } from "@hankweave-journal/core";
import type { Command } from "../io.js";
import { suggest } from "../suggest.js";
import { fleetLsCommand } from "./fleet-ls.js";
import { fleetQueryCommand } from "./fleet-query.js";

/** The subcommands of `fleet`. Add one line per subcommand. */
export const FLEET_SUBCOMMANDS: Command<any>[] = [
  fleetLsCommand,
  fleetQueryCommand,
];

interface FleetArgs {
  sub: Command<any>;
  args: unknown;
}

function help(): string {
  return [
    "usage: hankweave-journal fleet <subcommand> [options]",
    "",
    "subcommands:",
    ...FLEET_SUBCOMMANDS.map((c) => `  ${c.name.padEnd(8)} ${c.summary}`),
    "",
    ...FLEET_SUBCOMMANDS.map((c) => c.help.trimEnd() + "\n"),
  ].join("\n");
}

export const fleetCommand: Command<FleetArgs> = {
  name: "fleet",
  summary: "commands over every execution under a root: ls (list with status, cost, size, lock)",
  get help() {
    return help();
  },
  parseArgs(argv) {
    const [name, ...rest] = argv;
    const names = FLEET_SUBCOMMANDS.map((c) => c.name);
    if (name === undefined) throw new JournalError("USAGE", `fleet expects a subcommand: ${names.join(", ")}`, { expected: names });
    const sub = FLEET_SUBCOMMANDS.find((c) => c.name === name);
    if (!sub) {
      const near = suggest(name, names);
      throw new JournalError("USAGE", `unknown fleet subcommand ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ""}`, { expected: names });
    }
    return { sub, args: sub.parseArgs(rest) };
  },
  run({ sub, args }, io, ctx) {
    return sub.run(args, io, ctx);
  },
};
