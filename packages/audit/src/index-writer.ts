/**
 * Prepared statements of the index build and the fold sink that feeds them (one insert per
 * event, transition and finding, all inside the caller's transaction).
 */
import type Database from "better-sqlite3";
import type { HankweaveState } from "@hankweave-journal/core";
import type { AuditSink } from "./audit-types.js";
import { META_KEYS, type IndexMeta } from "./index-meta.js";
import type { RunLines } from "./run-lines.js";
import { summarizeRuns } from "./run-summary.js";

/** Writes fold output into the index tables. */
export class IndexWriter {
  private readonly insertEvent: Database.Statement;
  private readonly insertTransition: Database.Statement;
  private readonly insertFinding: Database.Statement;
  /** Findings inserted by this writer. */
  findingsWritten = 0;

  constructor(private readonly db: Database.Database) {
    this.insertEvent = db.prepare("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)");
    this.insertTransition = db.prepare("INSERT INTO transitions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    this.insertFinding = db.prepare("INSERT INTO findings (line, byte_offset, code, severity, run, codon, message, details) VALUES (?,?,?,?,?,?,?,?)");
  }

  /** The sink to give the audit fold. */
  sink(): AuditSink {
    const ev = this.insertEvent;
    const tr = this.insertTransition;
    const fi = this.insertFinding;
    return {
      event: (e) => void ev.run(e.line, e.offset, e.id, e.time, e.type, e.category, e.run, e.codon, e.size),
      row: (r) => {
        const j = r.journaled;
        const c = r.recomputed;
        tr.run(
          r.line, r.time, r.transition, r.run, r.codon, r.from, r.to, r.applied ? 1 : 0, r.codonCost, r.runCost,
          num(j?.currentRunId, "string"), num(j?.runCount, "number"), num(j?.totalCost, "number"), num(j?.currentRunCost, "number"),
          c.currentRunId, c.runCount, c.totalCost, c.currentRunCost,
        );
      },
      finding: (f) => {
        this.findingsWritten += 1;
        fi.run(f.line, f.byteOffset ?? null, f.code, f.severity, f.run, f.codon, f.message, f.details === undefined ? null : JSON.stringify(f.details));
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
    const insRun = this.db.prepare("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
    const insAttempt = this.db.prepare("INSERT INTO codon_attempts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    // run_seq: chronological position (run ids are not unique when a journal repeats a RunStarted).
    summarizeRuns(state, lines).forEach((r, seq) => {
      insRun.run(seq, r.run, r.status, r.startLine, r.endLine, r.startTime, r.endTime, r.cost, r.attempts.length,
        r.tokens.inputTokens, r.tokens.outputTokens, r.tokens.cacheCreationTokens, r.tokens.cacheReadTokens);
      for (const a of r.attempts) {
        insAttempt.run(seq, a.run, a.codon, a.attempt, a.index, a.startLine, a.endLine, a.startTime, a.endTime, a.status, a.outcome, a.cost,
          a.tokens.inputTokens, a.tokens.outputTokens, a.tokens.cacheCreationTokens, a.tokens.cacheReadTokens,
          a.loop?.loopId ?? null, a.loop?.iteration ?? null, a.failureReason);
      }
    });
  }

  /** Write every meta key (JSON values). */
  writeMeta(meta: IndexMeta): void {
    const put = this.db.prepare("INSERT OR REPLACE INTO meta VALUES (?, ?)");
    for (const k of META_KEYS) put.run(k, JSON.stringify(meta[k]));
  }
}

function num(v: unknown, type: "string" | "number"): unknown {
  return typeof v === type ? v : null;
}
