/**
 * The `--all <root>` form of diet, verify and restore (issue 19 item 2): flag parsing and printing
 * only; the engine is `runBatch` in @hankweave-journal/fleet. Each command adds BATCH_OPTIONS to
 * its flags, calls `batchFlags` in parseArgs and `runBatchCommand` in run.
 */
import { JournalError } from "@hankweave-journal/core";
import { runBatch, summarizeBatch, type BatchItem, type BatchOperation, type BatchOptions, type RowFilter } from "@hankweave-journal/fleet";
import { intFlag, type Parsed } from "../args.js";
import type { CliIO } from "../io.js";
import { cliPath } from "../exec-path.js";
import { escapeTerminal } from "../terminal-text.js";
import { FLEET_FILTER_OPTIONS, fleetFilterFlags, fleetProgress, jobsFlag } from "./fleet-ls.js";

/** The flags of the batch form. */
export const BATCH_OPTIONS = { all: { type: "string" }, jobs: { type: "string" }, ...FLEET_FILTER_OPTIONS } as const;

/** The help lines of the batch flags (each command appends them to its own). */
export const BATCH_HELP = `  --all ROOT            do it to every execution under ROOT (fleet ls finds them), each on its
                        own (its lock, its errors); one failure never stops the others. Ends with
                        a table: ok / skipped (with the reason's code) / failed (with the code);
                        exit 1 if any failed. Safe to interrupt and re-run (done ones are skipped)
  --jobs N              with --all: executions worked on at once (default 1)
  --status S            with --all: only executions whose newest run is S (running, completed,
                        failed, crashed, none; comma-separated)
  --finished-before D   with --all: only executions whose newest run ended before D (7d, 12h, a date)
  --max-depth N         with --all: deepest folder level searched (default 64)`;

/** The batch form's parsed flags. */
export interface BatchFlags {
  root: string;
  jobs: number | undefined;
  filter: RowFilter;
  maxDepth: number | undefined;
}

/**
 * The batch flags of `p`, or null without `--all`. Checks the positional: exactly one `<exec>`
 * without `--all`, none with it; the batch-only flags without `--all` are USAGE.
 */
export function batchFlags(p: Parsed): BatchFlags | null {
  const v = p.values;
  if (typeof v.all !== "string") {
    for (const f of ["jobs", "status", "finished-before", "max-depth"]) {
      if (v[f] !== undefined) throw new JournalError("USAGE", `--${f} needs --all <root>`);
    }
    if (p.positionals.length !== 1) throw new JournalError("USAGE", `expected one <exec> (or --all <root>), got ${p.positionals.length}`);
    return null;
  }
  if (p.positionals.length > 0) throw new JournalError("USAGE", `--all <root> takes no <exec> (got ${p.positionals[0]})`);
  return { root: v.all, jobs: jobsFlag(v.jobs), filter: fleetFilterFlags(v, Date.now()), maxDepth: intFlag(v["max-depth"], "--max-depth") };
}

const OUTCOME_ORDER = { failed: 0, skipped: 1, ok: 2 } as const;

/** The summary table: failed first, then skipped, then ok; by path within each. */
export function batchTable(items: BatchItem[]): string {
  const sorted = [...items].sort((a, b) => OUTCOME_ORDER[a.outcome] - OUTCOME_ORDER[b.outcome] || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const rows = [["OUTCOME", "PATH", "KIND", "CODE", "WHAT"], ...sorted.map((i) => [i.outcome, escapeTerminal(i.rel), i.kind, i.code ?? "-", escapeTerminal(i.message)])];
  const widths = [0, 1, 2, 3].map((k) => Math.max(...rows.map((r) => r[k]!.length)));
  return rows.map((r) => r.map((c, k) => (k < 4 ? c.padEnd(widths[k]!) : c)).join("  ")).join("\n") + "\n";
}

/**
 * Run `op` over the fleet and print: with `json`, one object per execution as it completes, then
 * `{summary}`; else the table and one totals line. Exit 1 if any failed or the batch was interrupted.
 */
export async function runBatchCommand(
  op: BatchOperation, flags: BatchFlags, opts: Pick<BatchOptions, "dryRun" | "diet" | "verify"> & { json: boolean }, io: CliIO,
): Promise<number> {
  const root = cliPath(io, flags.root);
  const progress = fleetProgress(io, `${op} --all`);
  const items: BatchItem[] = [];
  const batchOpts: BatchOptions = {
    dryRun: opts.dryRun === true, filter: flags.filter, signal: io.signal, onFolder: progress.folder,
    ...(flags.jobs !== undefined ? { jobs: flags.jobs } : {}), ...(flags.maxDepth !== undefined ? { maxDepth: flags.maxDepth } : {}),
    ...(opts.diet ? { diet: opts.diet } : {}), ...(opts.verify ? { verify: opts.verify } : {}),
  };
  try {
    for await (const it of runBatch(root, op, batchOpts)) {
      items.push(it);
      progress.row();
      if (opts.json) await io.stdout(JSON.stringify(it) + "\n");
    }
  } finally {
    progress.stop();
  }
  const s = summarizeBatch(op, items, opts.dryRun === true, io.signal.aborted);
  if (opts.json) {
    await io.stdout(JSON.stringify({ summary: s }) + "\n");
  } else {
    if (items.length > 0) await io.stdout(batchTable(items));
    await io.stdout(
      `${op} --all ${escapeTerminal(root)}${s.dryRun ? " (dry run: nothing changed)" : ""}: ${s.executions} executions, ${s.ok} ok, ${s.skipped} skipped, ${s.failed} failed` +
        `${s.interrupted ? " — interrupted: executions not yet visited are not listed; re-run to finish" : ""}\n`,
    );
  }
  return s.failed > 0 || s.interrupted ? 1 : 0;
}
