/**
 * Line numbers of runs and codon records, learned while folding: where each run started and
 * ended, and on which lines each record (attempt) started and reached a terminal status.
 * Records are matched by position in the run's `codons` array, which only grows (format §4.2).
 */
import type { Run } from "@hankweave-journal/core";
import { isTerminalStatus } from "./fold-helpers.js";

/** Lines of one record. */
export interface RecordLines {
  startLine: number;
  endLine: number | null;
  /** Turned failed by RunCrashed. */
  crashed: boolean;
}

/** Lines of one run. */
export interface RunLinesEntry {
  startLine: number | null;
  endLine: number | null;
  records: RecordLines[];
  /** Indexes of records not yet terminal. */
  open: number[];
}

/** JSON form for fold snapshots. */
export type RunLinesSnapshot = [string, RunLinesEntry][];

const RUN_END_TYPES = new Set(["RunCompleted", "RunFailed", "RunCrashed"]);

/** The line book-keeping of a fold (mutable, owned by one fold). */
export class RunLines {
  private readonly byRun: Map<string, RunLinesEntry>;

  constructor(snapshot?: RunLinesSnapshot) {
    this.byRun = new Map((snapshot ?? []).map(([k, v]) => [k, { ...v, records: v.records.map((r) => ({ ...r })), open: [...v.open] }]));
  }

  /** Record what transition `type` on `line` did to `run` (the run as it is after it). */
  sync(run: Run, type: string, line: number): void {
    let entry = this.byRun.get(run.runId);
    if (entry === undefined) {
      entry = { startLine: type === "RunStarted" ? line : null, endLine: null, records: [], open: [] };
      this.byRun.set(run.runId, entry);
    }
    while (entry.records.length < run.codons.length) {
      entry.open.push(entry.records.length);
      entry.records.push({ startLine: line, endLine: null, crashed: false });
    }
    if (entry.open.length > 0) {
      const still: number[] = [];
      for (const i of entry.open) {
        const rec = run.codons[i];
        if (rec !== undefined && isTerminalStatus(rec.status)) {
          entry.records[i].endLine = line;
          if (type === "RunCrashed") entry.records[i].crashed = true;
        } else {
          still.push(i);
        }
      }
      entry.open = still;
    }
    if (RUN_END_TYPES.has(type) && entry.endLine === null && run.status !== "running") entry.endLine = line;
  }

  /** Lines of a run, if it was seen. */
  get(runId: string): RunLinesEntry | undefined {
    return this.byRun.get(runId);
  }

  /** The line a record started on, or null. */
  recordStartLine(runId: string, index: number): number | null {
    return this.byRun.get(runId)?.records[index]?.startLine ?? null;
  }

  /** A JSON-friendly copy. */
  snapshot(): RunLinesSnapshot {
    return [...this.byRun].map(([k, v]) => [k, { ...v, records: v.records.map((r) => ({ ...r })), open: [...v.open] }]);
  }
}
