/**
 * `query <exec> "<SQL>"`: read-only SQL over the index, printed as a table or JSON.
 */
import { existsSync } from "node:fs";
import { buildIndex, streamQuery, QUERY_MAX_MEMORY_MB, QUERY_MAX_ROWS, QUERY_TIMEOUT_MS } from "@hankweave-journal/audit";
import { JournalError } from "@hankweave-journal/core";
import { intFlag, parseCommandArgs } from "../args.js";
import { escapeTerminal } from "../terminal-text.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface QueryArgs {
  exec: string;
  sql: string;
  json: boolean;
  update: boolean;
  maxRows: number;
  timeoutMs: number;
  maxMemoryMb: number;
}

const HELP = `usage: hankweave-journal query <exec> "<SQL>" [--json] [--no-update] [--max-rows N] [--timeout S] [--max-memory MB]

Runs one read-only SQL statement (SELECT / WITH … SELECT) against the index and prints a table,
or with --json one object {columns, rows: [{column: value}]}. The index is first brought up to
date (incrementally; nothing is written when it already is). Anything that is not a read-only,
row-returning statement is refused with QUERY_INVALID; the database is opened read-only.
Tables: events, transitions, codon_attempts, runs, findings, meta (see docs/audit.md).

  --json        JSON output
  --no-update   query the index as it is (fails with INDEX_STALE when there is none)
  --max-rows N  fail with QUERY_TOO_LARGE after N rows (default ${QUERY_MAX_ROWS}); rows are
                printed as they come (memory stays bounded)
  --timeout S   fail with QUERY_TIMEOUT when the query runs longer than S seconds, rows or none
                (default ${QUERY_TIMEOUT_MS / 1000}); the statement runs in a child process, killed then
  --max-memory MB  fail with QUERY_TOO_LARGE when the query needs more memory (default
                ${QUERY_MAX_MEMORY_MB}; SQLite's own memory is bounded where prlimit is installed)

Examples:
  hankweave-journal query ./runs/x "SELECT codon, attempt, outcome, cost FROM codon_attempts ORDER BY cost DESC LIMIT 5"
  hankweave-journal query ./runs/x "SELECT count(*) AS n FROM events" --json --no-update
  hankweave-journal query ./runs/x "SELECT * FROM events" --max-rows 100000 --timeout 60 --max-memory 1024

Exit codes: 0 ok, 1 failure (QUERY_INVALID, QUERY_TOO_LARGE, QUERY_TIMEOUT, INDEX_STALE, …), 2 usage.`;

/** The human table sizes its columns from the first rows this many rows, then streams the rest. */
const TABLE_SAMPLE_ROWS = 1000;

const MAX_CELL_CHARS = 60;

function show(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  const s = typeof v === "string" ? v : Buffer.isBuffer(v) ? `<${v.length} bytes>` : String(v);
  const one = escapeTerminal(s.replace(/\s+/g, " "));
  // Prose and bodies are shortened; a value without spaces (an id, a path, a hash) never is.
  return one.length > MAX_CELL_CHARS && one.includes(" ") ? `${one.slice(0, MAX_CELL_CHARS - 1)}…` : one;
}

/** The layout of a table sized from `sample` rows: header + rule, and a formatter for any row. */
function tableLayout(columns: string[], sample: unknown[][]): { head: string; row: (r: unknown[]) => string } {
  const cells = sample.map((r) => r.map(show));
  const widths = columns.map((c, i) => cells.reduce((w, r) => Math.max(w, r[i].length), escapeTerminal(c).length));
  const numeric = columns.map((_, i) => sample.length > 0 && sample.every((r) => r[i] === null || typeof r[i] === "number"));
  const line = (vals: string[]): string =>
    vals.map((v, i) => (numeric[i] ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd() + "\n";
  return { head: line(columns.map(escapeTerminal)) + line(widths.map((w) => "-".repeat(w))), row: (r) => line(r.map(show)) };
}

function rowsLine(n: number): string {
  return `(${n} row${n === 1 ? "" : "s"})\n`;
}

/** A plain-text table: header, rule, rows; numbers right-aligned; control bytes escaped. */
export function formatTable(columns: string[], rows: unknown[][]): string {
  const t = tableLayout(columns, rows);
  return t.head + rows.map(t.row).join("") + rowsLine(rows.length);
}

export const queryCommand: Command<QueryArgs> = {
  name: "query",
  summary: "read-only SQL over the index (table or --json)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      json: { type: "boolean" }, "no-update": { type: "boolean" }, "max-rows": { type: "string" }, timeout: { type: "string" },
      "max-memory": { type: "string" },
    }, { min: 2, max: 2 });
    const timeout = intFlag(p.values.timeout, "--timeout");
    const maxMemoryMb = intFlag(p.values["max-memory"], "--max-memory") ?? QUERY_MAX_MEMORY_MB;
    if (maxMemoryMb < 64) throw new JournalError("USAGE", `--max-memory expects at least 64 (MiB), got ${maxMemoryMb}`);
    return {
      exec: p.positionals[0], sql: p.positionals[1], json: p.values.json === true, update: p.values["no-update"] !== true,
      maxRows: intFlag(p.values["max-rows"], "--max-rows") ?? QUERY_MAX_ROWS, timeoutMs: timeout === undefined ? QUERY_TIMEOUT_MS : timeout * 1000,
      maxMemoryMb,
    };
  },
  async run(args, io, ctx) {
    const layout = execLayout(ctx);
    if (args.update) {
      const index = layout.index;
      if (!existsSync(index)) io.stderr(`query: building the index at ${index} (once; later queries update it)\n`);
      const r = await buildIndex(layout);
      if (r.mode !== "unchanged") io.stderr(`index: ${r.mode} ${index} (${r.linesRead} lines read)\n`);
    }
    const limits = { maxRows: args.maxRows, timeoutMs: args.timeoutMs, maxMemoryMb: args.maxMemoryMb };
    return printQueryRows(args.json, io, (onColumns, onRow) => streamQuery(layout, args.sql, onColumns, onRow, limits));
  },
};

/** A query that streams its columns once, then its rows (returns the row count). */
export type RowStream = (onColumns: (columns: string[]) => void | Promise<void>, onRow: (row: unknown[]) => void | Promise<void>) => Promise<number>;

/**
 * Print the rows of `stream` as `query` does: a table (sized from the first rows, then streamed)
 * or with `json` one object {columns, rows: [{column: value}]} streamed row by row (a failure
 * mid-way leaves it unclosed: exit 1, error on stderr). Shared by `query` and `fleet query`.
 */
export async function printQueryRows(json: boolean, io: CliIO, stream: RowStream): Promise<number> {
  let columns: string[] = [];
  if (json) {
    let n = 0;
    await stream(async (c) => {
      columns = c;
      await io.stdout(`{"columns":${JSON.stringify(columns)},"rows":[`);
    }, (r) => {
      const o: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      columns.forEach((c, i) => { o[c] = Buffer.isBuffer(r[i]) ? (r[i] as Buffer).toString("base64") : r[i]; });
      return io.stdout((n++ === 0 ? "" : ",") + JSON.stringify(o));
    });
    await io.stdout("]}\n");
    return 0;
  }
  const sample: unknown[][] = [];
  let layout: ReturnType<typeof tableLayout> | undefined;
  const n = await stream((c) => { columns = c; }, async (r) => {
    if (layout) return io.stdout(layout.row(r));
    sample.push(r);
    if (sample.length < TABLE_SAMPLE_ROWS) return;
    layout = tableLayout(columns, sample);
    await io.stdout(layout.head + sample.map(layout.row).join(""));
  });
  if (!layout) {
    const t = tableLayout(columns, sample);
    await io.stdout(t.head + sample.map(t.row).join(""));
  }
  await io.stdout(rowsLine(n));
  return 0;
}
