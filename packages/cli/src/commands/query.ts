/**
 * `query <exec> "<SQL>"`: read-only SQL over the index, printed as a table or JSON.
 */
import { buildIndex, queryIndex } from "@hankweave-journal/audit";
import { parseCommandArgs } from "../args.js";
import { escapeTerminal } from "../terminal-text.js";
import type { Command } from "../io.js";

export interface QueryArgs {
  exec: string;
  sql: string;
  json: boolean;
  update: boolean;
}

const HELP = `usage: hankweave-journal query <exec> "<SQL>" [--json] [--no-update]

Runs one read-only SQL statement (SELECT / WITH … SELECT) against the index and prints a table,
or with --json one object {columns, rows: [{column: value}]}. The index is first brought up to
date (incrementally; nothing is written when it already is). Anything that is not a read-only,
row-returning statement is refused with QUERY_INVALID; the database is opened read-only.
Tables: events, transitions, codon_attempts, runs, findings, meta (see docs/audit.md).

  --json        JSON output
  --no-update   query the index as it is (fails with INDEX_STALE when there is none)

Example: hankweave-journal query ./exec "SELECT codon, attempt, outcome, cost FROM codon_attempts ORDER BY cost DESC LIMIT 5"

Exit codes: 0 ok, 1 failure (QUERY_INVALID, INDEX_STALE, …), 2 usage.`;

const MAX_CELL_CHARS = 60;

function show(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  const s = typeof v === "string" ? v : Buffer.isBuffer(v) ? `<${v.length} bytes>` : String(v);
  const one = escapeTerminal(s.replace(/\s+/g, " "));
  return one.length > MAX_CELL_CHARS ? `${one.slice(0, MAX_CELL_CHARS - 1)}…` : one;
}

/** A plain-text table: header, rule, rows; numbers right-aligned. */
export function formatTable(columns: string[], rows: unknown[][]): string {
  const cells = rows.map((r) => r.map(show));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const numeric = columns.map((_, i) => rows.length > 0 && rows.every((r) => r[i] === null || typeof r[i] === "number"));
  const line = (vals: string[]): string =>
    vals.map((v, i) => (numeric[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd() + "\n";
  return line(columns) + line(widths.map((w) => "-".repeat(w))) + cells.map(line).join("") + `(${rows.length} row${rows.length === 1 ? "" : "s"})\n`;
}

export const queryCommand: Command<QueryArgs> = {
  name: "query",
  summary: "read-only SQL over the index (table or --json)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" }, "no-update": { type: "boolean" } }, { min: 2, max: 2 });
    return { exec: p.positionals[0], sql: p.positionals[1], json: p.values.json === true, update: p.values["no-update"] !== true };
  },
  async run(args, io) {
    if (args.update) {
      const r = await buildIndex(args.exec);
      if (r.mode !== "unchanged") io.stderr(`index: ${r.mode} (${r.linesRead} lines read)\n`);
    }
    const { columns, rows } = queryIndex(args.exec, args.sql);
    if (args.json) {
      const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, Buffer.isBuffer(r[i]) ? (r[i] as Buffer).toString("base64") : r[i]])));
      await io.stdout(JSON.stringify({ columns, rows: objects }) + "\n");
    } else {
      await io.stdout(formatTable(columns, rows));
    }
    return 0;
  },
};
