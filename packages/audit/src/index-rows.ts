/**
 * The index's rows as bound values, in column order: the one place that maps fold output to the
 * tables of `index-schema.ts`. Both writers use it — `IndexWriter` (one thread, in process) and
 * `IndexInsertWorker` (rows batched to the insert worker) — so their tables cannot drift apart.
 */
import type { AuditFinding, AuditRow, EventInfo, RunSummary } from "./audit-types.js";

/** One INSERT per table; `?` placeholders in column order. */
export const INSERT_SQL = {
  event: "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)",
  transition: "INSERT INTO transitions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  finding: "INSERT INTO findings (line, byte_offset, code, severity, run, codon, message, details) VALUES (?,?,?,?,?,?,?,?)",
  run: "INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
  attempt: "INSERT INTO codon_attempts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  meta: "INSERT OR REPLACE INTO meta VALUES (?, ?)",
} as const;

/** Values per row of each table (the placeholder counts above). */
export const EVENT_COLS = 9;
export const TRANSITION_COLS = 18;
export const FINDING_COLS = 8;
export const RUN_COLS = 13;
export const ATTEMPT_COLS = 19;

function num(v: unknown, type: "string" | "number"): unknown {
  return typeof v === type ? v : null;
}

/** Append the `events` row of `e` to `out`. */
export function pushEventRow(out: unknown[], e: EventInfo): void {
  out.push(e.line, e.offset, e.id, e.time, e.type, e.category, e.run, e.codon, e.size);
}

/** Append the `transitions` row of `r` (journaled values that are not of the right type become NULL). */
export function pushTransitionRow(out: unknown[], r: AuditRow): void {
  const j = r.journaled;
  const c = r.recomputed;
  out.push(
    r.line, r.time, r.transition, r.run, r.codon, r.from, r.to, r.applied ? 1 : 0, r.codonCost, r.runCost,
    num(j?.currentRunId, "string"), num(j?.runCount, "number"), num(j?.totalCost, "number"), num(j?.currentRunCost, "number"),
    c.currentRunId, c.runCount, c.totalCost, c.currentRunCost,
  );
}

/** Append the `findings` row of `f` (details as JSON). */
export function pushFindingRow(out: unknown[], f: AuditFinding): void {
  out.push(f.line, f.byteOffset ?? null, f.code, f.severity, f.run, f.codon, f.message, f.details === undefined ? null : JSON.stringify(f.details));
}

/**
 * Append the `runs` and `codon_attempts` rows of `runs`. `run_seq` is the chronological position
 * (run ids are not unique when a journal repeats a RunStarted).
 */
export function pushRunRows(runs: RunSummary[], runRows: unknown[], attemptRows: unknown[]): void {
  runs.forEach((r, seq) => {
    runRows.push(seq, r.run, r.status, r.startLine, r.endLine, r.startTime, r.endTime, r.cost, r.attempts.length,
      r.tokens.inputTokens, r.tokens.outputTokens, r.tokens.cacheCreationTokens, r.tokens.cacheReadTokens);
    for (const a of r.attempts) {
      attemptRows.push(seq, a.run, a.codon, a.attempt, a.index, a.startLine, a.endLine, a.startTime, a.endTime, a.status, a.outcome, a.cost,
        a.tokens.inputTokens, a.tokens.outputTokens, a.tokens.cacheCreationTokens, a.tokens.cacheReadTokens,
        a.loop?.loopId ?? null, a.loop?.iteration ?? null, a.failureReason);
    }
  });
}
