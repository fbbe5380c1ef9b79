/**
 * Argument parsing on top of node's built-in `util.parseArgs` (no dependency needed), turning
 * its TypeErrors into JournalError("USAGE") so `main` exits 2 with a clear message.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { JournalError } from "@hankweave-journal/core";
import { suggest } from "./suggest.js";

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
    // details.expected lists the command's flags (the --help test checks each is documented).
    throw new JournalError("USAGE", usageMessage(e as Error & { code?: string }, options), { expected: flagNames(options) });
  }
  if (parsed.positionals.length < positionals.min) {
    throw new JournalError("USAGE", `expected at least ${positionals.min} argument(s), got ${parsed.positionals.length}`);
  }
  if (parsed.positionals.length > positionals.max) {
    throw new JournalError("USAGE", `unexpected argument: ${parsed.positionals[positionals.max]}`);
  }
  return parsed;
}

/** The long flags of `options` (`--name`). */
export function flagNames(options: Options): string[] {
  return Object.keys(options).map((long) => `--${long}`);
}

/** One line for a parse error of node's parseArgs: unknown flags get "did you mean". */
function usageMessage(e: Error & { code?: string }, options: Options): string {
  if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const flag = /'([^']+)'/.exec(e.message)?.[1] ?? "";
    const near = suggest(flag, flagNames(options));
    return `unknown flag ${flag}${near ? ` (did you mean ${near}?)` : ""}`;
  }
  return e.message.split(". ")[0]!.replace(/\.$/, "");
}

/** A non-negative integer flag value, or undefined when absent. */
export function intFlag(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d+$/.test(value)) {
    throw new JournalError("USAGE", `${flag} expects a non-negative integer, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** The flags shared by commands that filter a journal: `--run`, `--codon`, `--from-line`, `--to-line`. */
export const FILTER_OPTIONS = {
  run: { type: "string" },
  codon: { type: "string" },
  "from-line": { type: "string" },
  "to-line": { type: "string" },
} as const;

/** A run/codon/line-range filter; absent flags stay absent (not undefined-valued keys). */
export interface FilterFlags {
  run?: string;
  codon?: string;
  fromLine?: number;
  toLine?: number;
}

/** The filter from parsed FILTER_OPTIONS values; USAGE when `--to-line` is before `--from-line`. */
export function filterFlags(values: Parsed["values"]): FilterFlags {
  const out: FilterFlags = {};
  if (typeof values.run === "string") out.run = values.run;
  if (typeof values.codon === "string") out.codon = values.codon;
  const from = intFlag(values["from-line"], "--from-line");
  const to = intFlag(values["to-line"], "--to-line");
  if (from !== undefined) out.fromLine = from;
  if (to !== undefined) out.toLine = to;
  if (from !== undefined && to !== undefined && to < from) throw new JournalError("USAGE", "--to-line is before --from-line");
  return out;
}
