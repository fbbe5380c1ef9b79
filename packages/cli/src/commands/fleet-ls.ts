/**
 * `hankweave-journal fleet ls <root>`: one row per execution directory under `<root>` (issue 19
 * item 1): path, journal kind, runs, newest run's status and end time, total cost, events, stored
 * bytes, lock state. Sources and bounds: docs/fleet.md.
 */
import { JournalError } from "@hankweave-journal/core";
import {
  compareRows, listFleet, parseFinishedBefore, parseSortColumn, parseStatusList, type FleetRow, type RowFilter, type SortColumn,
} from "@hankweave-journal/fleet";
import { intFlag, parseCommandArgs } from "../args.js";
import type { CliIO, Command } from "../io.js";
import { cliPath } from "../exec-path.js";
import { CLEAR_LINE } from "../progress.js";
import { escapeTerminal } from "../terminal-text.js";

export interface FleetLsArgs {
  root: string;
  json: boolean;
  filter: RowFilter;
  sort: SortColumn;
  reverse: boolean;
  jobs: number | undefined;
  maxDepth: number | undefined;
}

/** The filter flags shared by `fleet ls` and the `--all` batch commands. */
export const FLEET_FILTER_OPTIONS = {
  status: { type: "string" },
  "finished-before": { type: "string" },
  "max-depth": { type: "string" },
} as const;

/** The filter from parsed FLEET_FILTER_OPTIONS values (USAGE on a bad value). `nowMs`: the clock of durations. */
export function fleetFilterFlags(values: Record<string, unknown>, nowMs: number): RowFilter {
  const f: RowFilter = {};
  if (typeof values.status === "string") f.status = parseStatusList(values.status);
  if (typeof values["finished-before"] === "string") f.finishedBeforeMs = parseFinishedBefore(values["finished-before"], nowMs);
  return f;
}

/** A positive `--jobs N`, or undefined. */
export function jobsFlag(value: unknown): number | undefined {
  const n = intFlag(value, "--jobs");
  if (n === 0) throw new JournalError("USAGE", "--jobs expects a positive integer, got 0");
  return n;
}

const KIB = 1024;
function bytesText(n: number | null): string {
  if (n === null) return "-";
  if (n < KIB) return `${n} B`;
  if (n < KIB * KIB) return `${(n / KIB).toFixed(1)} KiB`;
  if (n < KIB ** 3) return `${(n / KIB / KIB).toFixed(1)} MiB`;
  return `${(n / KIB ** 3).toFixed(2)} GiB`;
}

const COLUMNS = ["PATH", "KIND", "RUNS", "STATUS", "ENDED", "COST", "EVENTS", "BYTES", "LOCK"] as const;

function cells(r: FleetRow): string[] {
  return [
    escapeTerminal(r.rel),
    r.kind === "broken" ? `broken ${r.code ?? ""}`.trim() : r.kind,
    r.runs === null ? "-" : String(r.runs),
    r.lastStatus ?? "-",
    r.lastEndTime ?? "-",
    r.totalCost === null ? "-" : r.totalCost.toFixed(4),
    r.events === null ? "-" : String(r.events),
    bytesText(r.storedBytes),
    r.lock,
  ];
}

/** Rows as an aligned table (header first). */
export function fleetTable(rows: FleetRow[]): string {
  const all = [COLUMNS as readonly string[], ...rows.map(cells)];
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  return all.map((c) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join("  ")).join("\n") + "\n";
}

/** A progress line on stderr (TTY only) counting folders searched and rows made. */
export function fleetProgress(io: CliIO, label: string): { folder(n: number): void; row(): void; stop(): void } {
  let folders = 0;
  let rows = 0;
  let shown = false;
  const timer = io.stderrIsTTY
    ? setInterval(() => {
      io.stderr(`${CLEAR_LINE}${label}: ${folders} folders searched, ${rows} executions`);
      shown = true;
    }, 250)
    : null;
  timer?.unref();
  return {
    folder: (n) => void (folders = n),
    row: () => void rows++,
    stop: () => {
      if (timer) clearInterval(timer);
      if (shown) io.stderr(CLEAR_LINE);
    },
  };
}

const HELP = `usage: hankweave-journal fleet ls <root> [--json] [--status S[,S…]] [--finished-before D]
                                     [--sort COLUMN] [--reverse] [--jobs N] [--max-depth N]

Lists every execution directory under <root> (a folder holding .hankweave/, at any depth, <root>
included; symbolic links are never followed, .hankweave/ never entered), one row each: path
(relative to <root>), journal kind (plain, compatible, seekable, extended, none, broken + code),
runs, the newest run's status and end time, total cost, events, stored bytes, lock state (none,
live, stale, invalid). Runs, status and cost come from a fold of the journal (never from a
state.json that may be stale); nothing is modified and no lock is taken. A broken execution is a
row with its code, never an abort.

  --json                one JSON object per line (keys: path, rel, kind, code, message, runs,
                        lastRunId, lastStatus, lastEndTime, totalCost, events, storedBytes, lock, source)
  --status S            only rows whose newest run is S: running, completed, failed, crashed,
                        none (no run); several comma-separated
  --finished-before D   only rows whose newest run ended before D: a duration ago (90s, 30m,
                        12h, 7d, 2w) or a date (2026-11-30, 2026-11-30T12:00:00Z)
  --sort COLUMN         path (default), kind, runs, status, ended, cost, events, bytes, lock
  --reverse             reverse the sort
  --jobs N              executions read concurrently (default 4)
  --max-depth N         deepest folder level searched (default 64; deeper: a FLEET_TOO_DEEP row)

Examples:
  hankweave-journal fleet ls ./runs
  hankweave-journal fleet ls ./runs --status completed --finished-before 7d --sort bytes --reverse
  hankweave-journal fleet ls ./runs --json | jq -r 'select(.lock == "stale") | .path'

Exit codes: 0 listed (broken rows included), 1 the root cannot be read (FLEET_ROOT_INVALID,
PERMISSION_DENIED), 2 usage.`;

export const fleetLsCommand: Command<FleetLsArgs> = {
  name: "ls",
  summary: "one row per execution under a root: kind, runs, status, end, cost, events, bytes, lock",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      json: { type: "boolean" }, sort: { type: "string" }, reverse: { type: "boolean" }, jobs: { type: "string" }, ...FLEET_FILTER_OPTIONS,
    }, { min: 1, max: 1 });
    return {
      root: p.positionals[0]!,
      json: p.values.json === true,
      filter: fleetFilterFlags(p.values, Date.now()),
      sort: typeof p.values.sort === "string" ? parseSortColumn(p.values.sort) : "path",
      reverse: p.values.reverse === true,
      jobs: jobsFlag(p.values.jobs),
      maxDepth: intFlag(p.values["max-depth"], "--max-depth"),
    };
  },
  async run(args, io) {
    const root = cliPath(io, args.root);
    const progress = fleetProgress(io, "fleet ls");
    const rows: FleetRow[] = [];
    try {
      const opts = {
        filter: args.filter, signal: io.signal, onFolder: progress.folder,
        ...(args.jobs !== undefined ? { jobs: args.jobs } : {}), ...(args.maxDepth !== undefined ? { maxDepth: args.maxDepth } : {}),
      };
      for await (const row of listFleet(root, opts)) {
        rows.push(row);
        progress.row();
      }
    } finally {
      progress.stop();
    }
    rows.sort(compareRows(args.sort, args.reverse));
    if (args.json) {
      // One write per 256 rows: 10⁵ rows stay fast and bounded.
      for (let i = 0; i < rows.length; i += 256) await io.stdout(rows.slice(i, i + 256).map((r) => JSON.stringify(r) + "\n").join(""));
    } else {
      await io.stdout(fleetTable(rows));
    }
    return 0;
  },
};
