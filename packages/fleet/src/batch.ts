/**
 * Batch work over a fleet (issue 19 item 2): `diet`, `verify` or `restore` every execution under a
 * root, each on its own: its own lock (the diet claims each execution's runtime.lock itself), its
 * own errors; one failure never stops the others. The CLI's `--all` forms only parse and print.
 *
 * Guarantees:
 * - Each execution gets exactly one `BatchItem`: `ok`, `skipped` (with the code of why: already
 *   dieted, run not finished, lock held, nothing to restore, no journal) or `failed` (with the code
 *   of the error or, for verify, of the first error/warning finding).
 * - Nothing is lost: every change is the single-execution operation (`applyDiet`,
 *   `restoreJournal`), which is crash-safe on its own; the batch adds no write.
 * - Safe to interrupt and re-run: a SIGKILL leaves at most the executions in flight mid-operation,
 *   which their own crash safety covers (the original intact or a complete verified diet; a stale
 *   offline lock whose pid is dead, replaced by the next claim); a re-run skips what is done
 *   (`ALREADY_DIETED`, a restored journal: `NOTHING_TO_RESTORE`). An aborted `signal` stops
 *   starting new executions and lets those in flight finish.
 * - `dryRun`: decides each execution as the real run would (kind, lock, last run's status) and
 *   changes nothing.
 *
 * @example for await (const item of runBatch("/runs", "diet", { jobs: 2 })) console.log(item.outcome, item.rel);
 */
import { isJournalError, resolveExec, type ErrorCode, type ExecLayout } from "@hankweave-journal/core";
import { inspectLock, ioError, openRegularForRead } from "@hankweave-journal/journal";
import { applyDiet, lastRunStatus, restoreJournal, type DietKind, type DietOptions } from "@hankweave-journal/diet";
import { verifyExecution } from "@hankweave-journal/audit";
import { discoverExecutions, type FleetEntry, type JournalKind } from "./discover.js";
import { executionRow } from "./execution-row.js";
import { isEmptyFilter, matchesFilter, type RowFilter } from "./filter.js";
import { mapConcurrent } from "./pool.js";

/** What a batch does to each execution. */
export type BatchOperation = "diet" | "verify" | "restore";

/** How one execution fared. */
export type BatchOutcome = "ok" | "skipped" | "failed";

/** The result for one execution. */
export interface BatchItem {
  path: string;
  rel: string;
  /** The journal kind before the operation. */
  kind: JournalKind;
  outcome: BatchOutcome;
  /** Why skipped or failed (an error code, or a verify finding code); null when ok. */
  code: string | null;
  /** What was done, would be done (dry run), or why not. */
  message: string;
  dryRun: boolean;
  ms: number;
}

export interface BatchOptions {
  /** Executions worked on concurrently. Default 1. */
  jobs?: number;
  dryRun?: boolean;
  /** Only executions whose `fleet ls` row passes (computed only when the filter is not empty). */
  filter?: RowFilter;
  signal?: AbortSignal;
  maxDepth?: number;
  onFolder?: (folders: number) => void;
  /** Options of each diet (`hook`: crash tests kill a diet at a chosen step). */
  diet?: Pick<DietOptions, "kind" | "force" | "casLevel" | "hook">;
  /** Options of each verify. */
  verify?: { deep?: boolean };
}

/** Counts of a batch. */
export interface BatchSummary {
  operation: BatchOperation;
  executions: number;
  ok: number;
  skipped: number;
  failed: number;
  dryRun: boolean;
  /** True when the batch stopped early (signal): executions not yet visited have no item. */
  interrupted: boolean;
}

/** Codes that mean "not this one, and that is fine": the execution is skipped, not failed. */
const SKIP_CODES: ReadonlySet<string> = new Set<ErrorCode>(["RUN_NOT_FINISHED", "LOCK_HELD", "ALREADY_DIETED", "NOTHING_TO_RESTORE", "JOURNAL_NOT_FOUND"]);

type Decision = { act: "run"; would: string } | { act: "skip" | "fail"; code: string; why: string };

const DIETED: ReadonlySet<JournalKind> = new Set<JournalKind>(["compatible", "seekable", "extended"]);

/** What the batch does with `entry` from its kind alone (pure). */
export function decideByKind(op: BatchOperation, entry: FleetEntry, dietKind: DietKind = "compatible"): Decision {
  if (entry.kind === "broken") return { act: "fail", code: entry.code ?? "IO_ERROR", why: entry.message ?? "broken" };
  if (entry.kind === "none") {
    return op === "restore"
      ? { act: "skip", code: "NOTHING_TO_RESTORE", why: "no journal at all" }
      : { act: "skip", code: "JOURNAL_NOT_FOUND", why: "no journal (.hankweave/ without events.jsonl or a dieted pair)" };
  }
  const dieted = DIETED.has(entry.kind);
  if (op === "diet") return dieted ? { act: "skip", code: "ALREADY_DIETED", why: `already dieted (${entry.kind})` } : { act: "run", would: `would diet (${dietKind})` };
  if (op === "restore") {
    if (dieted) return { act: "run", would: `would restore events.jsonl (${entry.manifest?.originalBytes ?? "?"} bytes) from the ${entry.kind} diet` };
    return { act: "skip", code: "NOTHING_TO_RESTORE", why: entry.restoredFrom ? `already restored (the ${entry.restoredFrom} pair is kept)` : "plain journal: nothing to restore" };
  }
  return { act: "run", would: `would verify the ${entry.kind} journal` };
}

function item(entry: FleetEntry, outcome: BatchOutcome, code: string | null, message: string, dryRun: boolean, t0: number): BatchItem {
  return { path: entry.path, rel: entry.rel, kind: entry.kind, outcome, code, message, dryRun, ms: Math.round(performance.now() - t0) };
}

/** The diet's own refusals, checked without changing anything (for --dry-run). */
async function dietPreflight(layout: ExecLayout, force: boolean): Promise<Decision | null> {
  const lock = await inspectLock(layout);
  if (lock.state === "live") return { act: "skip", code: "LOCK_HELD", why: `runtime.lock is ${lock.reason}` };
  if (lock.state === "invalid") return { act: "fail", code: "LOCK_INVALID", why: `runtime.lock cannot be judged: ${lock.reason}` };
  if (force) return null;
  const fh = await openRegularForRead(layout.journal);
  try {
    const last = await lastRunStatus(fh, (await fh.stat()).size);
    if (last !== "completed" && last !== "failed") return { act: "skip", code: "RUN_NOT_FINISHED", why: `the last run is ${last === "none" ? "absent" : last}, not completed or failed` };
  } finally {
    await fh.close();
  }
  return null;
}

async function restorePreflight(layout: ExecLayout): Promise<Decision | null> {
  // Restore takes no lock, but a live runtime in a dieted directory is not ours to race.
  const lock = await inspectLock(layout);
  if (lock.state === "live") return { act: "skip", code: "LOCK_HELD", why: `runtime.lock is ${lock.reason}` };
  return null;
}

async function runOne(op: BatchOperation, entry: FleetEntry, opts: BatchOptions): Promise<BatchItem> {
  const t0 = performance.now();
  const dryRun = opts.dryRun === true;
  const dietKind = opts.diet?.kind ?? "compatible";
  // The discovered path enters once: everything below works on its layout.
  const layout = resolveExec(entry.path);
  try {
    let d = decideByKind(op, entry, dietKind);
    if (d.act === "run" && op === "diet" && dryRun) d = (await dietPreflight(layout, opts.diet?.force === true)) ?? d;
    if (d.act === "run" && op === "restore") d = (await restorePreflight(layout)) ?? d;
    if (d.act !== "run") return item(entry, d.act === "skip" ? "skipped" : "failed", d.code, d.why, dryRun, t0);
    if (dryRun) return item(entry, "ok", null, d.would, true, t0);
    if (op === "diet") {
      const r = await applyDiet(layout, { ...opts.diet, kind: dietKind });
      return item(entry, "ok", null, `${r.status} (${r.kind}): ${r.originalBytes} → ${r.stored.totalBytes} bytes, verified`, false, t0);
    }
    if (op === "restore") {
      const r = await restoreJournal(layout);
      return item(entry, "ok", null, `${r.status}: ${r.originalBytes} bytes, sha256 ${r.originalSha256.slice(0, 12)}… (verified)`, false, t0);
    }
    const r = await verifyExecution(layout, { deep: opts.verify?.deep === true });
    if (r.ok) return item(entry, "ok", null, `clean: ${r.kind} journal, ${r.events} events, ${r.summary.info} info`, false, t0);
    const first = r.findings.find((f) => f.severity === "error") ?? r.findings.find((f) => f.severity === "warning");
    return item(entry, "failed", first?.code ?? "IO_ERROR", `${r.summary.error} errors, ${r.summary.warning} warnings${first ? `; first: ${first.message}` : ""}`, false, t0);
  } catch (e) {
    const je = isJournalError(e) ? e : ioError(e, entry.path);
    return item(entry, SKIP_CODES.has(je.code) ? "skipped" : "failed", je.code, je.message, dryRun, t0);
  }
}

/**
 * Run `op` over every execution under `root` (see the module comment). Items come in completion
 * order. Throws only what discovery throws for the root (FLEET_ROOT_INVALID, PERMISSION_DENIED).
 */
export async function* runBatch(root: string, op: BatchOperation, opts: BatchOptions = {}): AsyncGenerator<BatchItem> {
  const filter = opts.filter ?? {};
  // The walk gets no signal (it would throw): the pool stops pulling from it instead.
  const discoverOpts = { ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}), ...(opts.onFolder ? { onFolder: opts.onFolder } : {}) };
  const work = async (entry: FleetEntry): Promise<BatchItem | null> => {
    if (!isEmptyFilter(filter) && !matchesFilter(await executionRow(entry), filter)) return null;
    return runOne(op, entry, opts);
  };
  const entries = discoverExecutions(root, discoverOpts);
  for await (const it of mapConcurrent(entries, opts.jobs ?? 1, work, opts.signal)) {
    if (it !== null) yield it;
  }
}

/** Count items into a summary. Pure. */
export function summarizeBatch(op: BatchOperation, items: readonly BatchItem[], dryRun: boolean, interrupted: boolean): BatchSummary {
  const s: BatchSummary = { operation: op, executions: items.length, ok: 0, skipped: 0, failed: 0, dryRun, interrupted };
  for (const i of items) s[i.outcome]++;
  return s;
}
