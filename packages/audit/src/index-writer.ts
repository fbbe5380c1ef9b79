/**
 * Prepared statements of the index build and the fold sink that feeds them (one insert per
 * event, transition and finding, all inside the caller's transaction).
 */
import type Database from "better-sqlite3";
import type { HankweaveState } from "@hankweave-journal/core";
import type { AuditSink } from "./audit-types.js";
import { META_KEYS, type IndexMeta } from "./index-meta.js";
import type { RunLines } from "./run-lines.js";
import { ATTEMPT_COLS, INSERT_SQL, RUN_COLS, pushEventRow, pushFindingRow, pushRunRows, pushTransitionRow } from "./index-rows.js";
import { summarizeRuns } from "./run-summary.js";

/** Writes fold output into the index tables. */
export class IndexWriter {
  private readonly insertEvent: Database.Statement;
  private readonly insertTransition: Database.Statement;
  private readonly insertFinding: Database.Statement;
  /** Findings inserted by this writer. */
  findingsWritten = 0;

  constructor(private readonly db: Database.Database) {
    this.insertEvent = db.prepare(INSERT_SQL.event);
    this.insertTransition = db.prepare(INSERT_SQL.transition);
    this.insertFinding = db.prepare(INSERT_SQL.finding);
  }

  /** The sink to give the audit fold. */
  sink(): AuditSink {
    const ev = this.insertEvent;
    const tr = this.insertTransition;
    const fi = this.insertFinding;
    const row: unknown[] = [];
    const bind = (st: Database.Statement, push: () => void): void => {
      row.length = 0;
      push();
      st.run(row);
    };
    return {
      event: (e) => bind(ev, () => pushEventRow(row, e)),
      row: (r) => bind(tr, () => pushTransitionRow(row, r)),
      finding: (f) => {
        this.findingsWritten += 1;
        bind(fi, () => pushFindingRow(row, f));
      },
    };
  }

  /** Every event id with its first line (to continue DUPLICATE_ID checks). */
  loadIds(): [string, number][] {
    return this.db.prepare("SELECT id, MIN(line) AS line FROM events GROUP BY id").raw().all() as [string, number][];
  }

  /** Forget torn-tail findings: the fragment is read again from `indexed_bytes`. */
  dropTornTail(): void {
    this.db.prepare("DELETE FROM findings WHERE code = 'TORN_TAIL'").run();
  }

  /** Rewrite `runs` and `codon_attempts` from the folded state (they are small). */
  replaceRunsAndAttempts(state: HankweaveState, lines: RunLines): void {
    this.db.exec("DELETE FROM runs; DELETE FROM codon_attempts;");
    const runRows: unknown[] = [];
    const attemptRows: unknown[] = [];
    pushRunRows(summarizeRuns(state, lines), runRows, attemptRows);
    const insRun = this.db.prepare(INSERT_SQL.run);
    const insAttempt = this.db.prepare(INSERT_SQL.attempt);
    for (let i = 0; i < runRows.length; i += RUN_COLS) insRun.run(runRows.slice(i, i + RUN_COLS));
    for (let i = 0; i < attemptRows.length; i += ATTEMPT_COLS) insAttempt.run(attemptRows.slice(i, i + ATTEMPT_COLS));
  }

  /** Write every meta key (JSON values). */
  writeMeta(meta: IndexMeta): void {
    const put = this.db.prepare(INSERT_SQL.meta);
    for (const k of META_KEYS) put.run(k, JSON.stringify(meta[k]));
  }
}
