/**
 * Argument parsing on top of node's built-in `util.parseArgs` (no dependency needed), turning
 * its TypeErrors into JournalError("USAGE") so `main` exits 2 with a clear message.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { JournalError } from "@hankweave-journal/core";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** Parse `argv` with `options`; unknown flags and missing values become USAGE errors. */
export function parseCommandArgs(argv: string[], options: Options, positionals: { min: number; max: number }): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as Parsed;
  } catch (e) {
    throw new JournalError("USAGE", (e as Error).message);
  }
  if (parsed.positionals.length < positionals.min) {
    throw new JournalError("USAGE", `expected at least ${positionals.min} argument(s), got ${parsed.positionals.length}`);
  }
  if (parsed.positionals.length > positionals.max) {
    throw new JournalError("USAGE", `unexpected argument: ${parsed.positionals[positionals.max]}`);
  }
  return parsed;
}

/** A non-negative integer flag value, or undefined when absent. */
export function intFlag(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d+$/.test(value)) {
    throw new JournalError("USAGE", `${flag} expects a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
