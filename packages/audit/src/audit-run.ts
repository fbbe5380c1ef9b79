/**
 * The I/O shell of the audit: reads a journal through the transparent reader (`openReader`, so
 * plain and dieted journals audit the same), drives the pure fold, filters, and streams rows and
 * findings to the caller.
 */
import type { HankweaveState } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { AuditFold } from "./audit-fold.js";
import { IndexWorker } from "./index-worker.js";
import { foldWithParseAhead, type ParseAheadOptions } from "./parse-ahead.js";
import type { AuditFinding, AuditRow, RunSummary } from "./audit-types.js";
import { summarizeRuns } from "./run-summary.js";
import { type ExecRef, resolveExec } from "@hankweave-journal/core";

/** Which rows and findings to report. The fold always starts at line 0 (state needs the prefix). */
export interface AuditFilter {
  run?: string;
  codon?: string;
  fromLine?: number;
  toLine?: number;
}

/** Streaming callbacks of `streamAudit`. */
export interface AuditCallbacks {
  row?(row: AuditRow): void | Promise<void>;
  finding?(finding: AuditFinding): void | Promise<void>;
}

/** What an audit ends with (filter applied to the counts of rows and findings). */
export interface AuditEnd {
  exec: string;
  kind: "plain" | "dieted";
  /** Parsed events read (up to `toLine`). */
  events: number;
  /** `state.transition` events read. */
  transitions: number;
  /** Rows and findings that passed the filter. */
  rows: number;
  findings: { error: number; warning: number; info: number };
  byCode: Record<string, number>;
  runs: RunSummary[];
  state: HankweaveState;
}

/** True when `x` passes `filter` (findings/rows without a run or codon fail a run/codon filter). */
export function passesFilter(x: { line: number; run: string | null; codon: string | null }, filter: AuditFilter): boolean {
  if (filter.fromLine !== undefined && x.line < filter.fromLine) return false;
  if (filter.toLine !== undefined && x.line > filter.toLine) return false;
  if (filter.run !== undefined && x.run !== filter.run) return false;
  if (filter.codon !== undefined && x.codon !== filter.codon) return false;
  return true;
}

/**
 * Audit `exec`, streaming rows and findings in line order to `cb`.
 *
 * Guarantees: bounded memory (rows are not kept); findings of the reader (corrupt lines, torn
 * tail) arrive in line order among the fold's own. Read-only: never modifies the directory.
 * Throws JournalError when there is no journal (JOURNAL_NOT_FOUND, EXEC_NOT_FOUND, …).
 * @example await streamAudit("/runs/x", { run: "r1" }, { row: (r) => console.log(r.edge) });
 */
export async function streamAudit(
  exec: ExecRef, filter: AuditFilter = {}, cb: AuditCallbacks = {}, signal?: AbortSignal, opts: { parseAhead?: ParseAheadOptions } = {},
): Promise<AuditEnd> {
  const layout = resolveExec(exec);
  const findings = { error: 0, warning: 0, info: 0 };
  const byCode: Record<string, number> = {};
  let rows = 0;
  // The fold is synchronous; buffer its output per line and flush with await (backpressure).
  const pending: (() => void | Promise<void>)[] = [];
  const fold = new AuditFold({
    row: (r) => {
      if (!passesFilter(r, filter)) return;
      rows += 1;
      if (cb.row) pending.push(() => cb.row?.(r));
    },
    finding: (f) => {
      if (!passesFilter(f, filter)) return;
      findings[f.severity] += 1;
      byCode[f.code] = (byCode[f.code] ?? 0) + 1;
      if (cb.finding) pending.push(() => cb.finding?.(f));
    },
  });
  const flush = async (): Promise<void> => {
    for (const p of pending.splice(0)) await p();
  };
  const reader = await openReader(layout);
  try {
    const toLine = filter.toLine ?? Number.POSITIVE_INFINITY;
    // A worker parses the next chunk while this thread folds the current one (parse-ahead.ts).
    const worker = new IndexWorker(null);
    try {
      const seen = { line: -1, offset: -1, length: 0, count: 0, bytes: 0 };
      await foldWithParseAhead(fold, worker, reader, { offset: 0, line: 0 }, seen, opts.parseAhead, {
        beforeLine: (line) => line <= toLine && signal?.aborted !== true,
        afterLine: () => (pending.length > 0 ? flush() : undefined),
      });
    } finally {
      await worker.terminate();
    }
    await flush();
    const totals = fold.totals;
    return {
      exec: layout.exec,
      kind: reader.kind,
      events: totals.events,
      transitions: totals.transitions,
      rows,
      findings,
      byCode,
      runs: summarizeRuns(fold.state, fold.lines),
      state: fold.state,
    };
  } finally {
    await reader.close();
  }
}

/** A complete audit held in memory: rows, findings and the end summary. */
export interface AuditReport extends AuditEnd {
  rowList: AuditRow[];
  findingList: AuditFinding[];
}

/**
 * Audit `exec` and keep every row and finding (for tests, the report and small journals; use
 * `streamAudit` for large ones).
 * @example const a = await auditExecution("/runs/x"); a.findings.error === 0;
 */
export async function auditExecution(exec: ExecRef, filter: AuditFilter = {}): Promise<AuditReport> {
  const rowList: AuditRow[] = [];
  const findingList: AuditFinding[] = [];
  const end = await streamAudit(exec, filter, { row: (r) => void rowList.push(r), finding: (f) => void findingList.push(f) });
  return { ...end, rowList, findingList };
}
