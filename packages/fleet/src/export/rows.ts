/**
 * The rows of one execution's export: the journal read through the transparent reader
 * (`openReader`: plain and every dieted kind) and folded by the audit fold (`AuditFold`, which
 * applies each transition through core's reducer), runs and attempts from `summarizeRuns` (the
 * outcome rules of `outcomes.ts`) — the same values the per-execution SQLite index stores
 * (`index-rows.ts`); this module only maps them to the export's columns. No second reducer.
 */
import type { ExecRef } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { AuditFold, summarizeRuns, type AuditRow, type EventInfo, type RunSummary } from "@hankweave-journal/audit";
import type { ExportTable } from "./schema.js";

/** One row: column name → value (JSON-friendly). */
export type Row = Record<string, string | number | boolean | null>;

/** Where rows go; `write` may return a promise (backpressure), awaited between journal lines. */
export interface RowSink {
  write(table: ExportTable, row: Row): void;
  /** Called between journal lines; await it (a writer flushes its buffer here). */
  drain(): Promise<void> | void;
}

/** Which execution the rows belong to. */
export interface ExecutionRef {
  id: string;
  path: string;
}

function typed(v: unknown, type: "string" | "number"): string | number | null {
  return typeof v === type ? (v as string | number) : null;
}

function eventRow(x: ExecutionRef, e: EventInfo, payload: string | null): Row {
  return {
    execution_id: x.id, execution_path: x.path, line: e.line, byte_offset: e.offset, id: e.id, time: e.time, type: e.type,
    category: e.category, run: e.run, codon: e.codon, size: e.size, payload,
  };
}

function transitionRow(x: ExecutionRef, r: AuditRow): Row {
  const j = r.journaled;
  const c = r.recomputed;
  return {
    execution_id: x.id, execution_path: x.path, line: r.line, byte_offset: r.offset, time: r.time, type: r.transition, run: r.run, codon: r.codon,
    from_status: r.from, to_status: r.to, applied: r.applied, codon_cost_after: r.codonCost, run_cost_after: r.runCost,
    journaled_current_run_id: typed(j?.currentRunId, "string"), journaled_run_count: typed(j?.runCount, "number"),
    journaled_total_cost: typed(j?.totalCost, "number"), journaled_current_run_cost: typed(j?.currentRunCost, "number"),
    recomputed_current_run_id: c.currentRunId, recomputed_run_count: c.runCount, recomputed_total_cost: c.totalCost,
    recomputed_current_run_cost: c.currentRunCost,
  };
}

function runRows(x: ExecutionRef, runs: RunSummary[], sink: RowSink): void {
  runs.forEach((r, seq) => {
    sink.write("runs", {
      execution_id: x.id, execution_path: x.path, run_seq: seq, run: r.run, status: r.status, start_line: r.startLine, end_line: r.endLine,
      start_time: r.startTime, end_time: r.endTime, cost: r.cost, attempts: r.attempts.length,
      input_tokens: r.tokens.inputTokens, output_tokens: r.tokens.outputTokens, cache_creation_tokens: r.tokens.cacheCreationTokens,
      cache_read_tokens: r.tokens.cacheReadTokens,
    });
    for (const a of r.attempts) {
      sink.write("codon_attempts", {
        execution_id: x.id, execution_path: x.path, run_seq: seq, run: a.run, codon: a.codon, attempt: a.attempt, idx: a.index,
        start_line: a.startLine, end_line: a.endLine, start_time: a.startTime, end_time: a.endTime, status: a.status, outcome: a.outcome,
        cost: a.cost, input_tokens: a.tokens.inputTokens, output_tokens: a.tokens.outputTokens,
        cache_creation_tokens: a.tokens.cacheCreationTokens, cache_read_tokens: a.tokens.cacheReadTokens,
        loop_id: a.loop?.loopId ?? null, loop_iteration: a.loop?.iteration ?? null, failure_reason: a.failureReason, reason: a.reason,
      });
    }
  });
}

/** What one execution's fold produced. */
export interface FoldCounts {
  kind: "plain" | "dieted";
  events: number;
  transitions: number;
  runs: number;
  attempts: number;
  /** Bytes of the (original) events.jsonl. */
  journalBytes: number;
}

/**
 * Read and fold the journal of `exec`, writing the rows of all four tables to `sink` (events and
 * transitions in line order as they are read, runs and attempts at the end). `payloads`: fill the
 * events' `payload` column with each line's bytes.
 *
 * Guarantees: read-only; memory is the fold's (reducer state + one entry per event id) plus what
 * the sink keeps; throws the reader's JournalError (EXEC_NOT_FOUND, JOURNAL_NOT_FOUND, CAS_MISSING, …).
 */
export async function foldExecutionRows(exec: ExecRef, x: ExecutionRef, sink: RowSink, opts: { payloads: boolean; signal?: AbortSignal }): Promise<FoldCounts> {
  let payload: string | null = null;
  let attempts = 0;
  const fold = new AuditFold({
    event: (e) => sink.write("events", eventRow(x, e, payload)),
    row: (r) => sink.write("transitions", transitionRow(x, r)),
  });
  const reader = await openReader(exec);
  try {
    const info = await reader.info();
    for await (const rec of reader.events({ onFinding: (f) => fold.finding(f) })) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      payload = opts.payloads ? rec.bytes.toString("utf8") : null;
      fold.event({ line: rec.line, offset: rec.offset, size: rec.bytes.length, event: rec.event });
      await sink.drain();
    }
    const runs = summarizeRuns(fold.state, fold.lines);
    runRows(x, runs, sink);
    for (const r of runs) attempts += r.attempts.length;
    const t = fold.totals;
    return { kind: reader.kind, events: t.events, transitions: t.transitions, runs: runs.length, attempts, journalBytes: info.bytes };
  } finally {
    await reader.close();
  }
}
