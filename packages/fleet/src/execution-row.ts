/**
 * The facts `fleet ls` prints for one execution (issue 19 item 2), each from the cheapest source
 * that is correct:
 *
 * - runs, last run's status and end time, total cost: the fold of the journal (`foldJournal`
 *   through the transparent reader: only state-relevant lines are parsed, a dieted journal's CAS
 *   bodies are never read). `state.json` is not trusted for them: it cannot be proven current
 *   without reading the journal (the reference runtime saves it before journaling a transition,
 *   our engine after, and mtimes prove nothing). It is used only as format §4.4 says: to carry a
 *   foreign journal's run start/end times, and as the only source when there is no journal.
 * - events: a dieted journal's manifest `totalEvents` (the journal cannot change); a plain
 *   journal's sidecar when its `byteLength` equals the file size (format §2.5: trusted), counted
 *   on from its `byteLength` when smaller, else counted from 0 (complete lines `JSON.parse` accepts).
 * - stored bytes: events.jsonl's size (discovery's stat), or for a dieted journal the reader's
 *   `info().storedBytes` (pointer journal + manifest + CAS).
 * - lock: `inspectLock` (none / live / stale / invalid), never modified.
 *
 * Never throws for one execution: a failure is a row of kind `broken` with its code.
 */
import { isJournalError, type ErrorCode, type HankweaveState } from "@hankweave-journal/core";
import { chunkLines, fileByteRead, inspectLock, ioError, openRegularForRead, readSidecarStatus } from "@hankweave-journal/journal";
import { openReader } from "@hankweave-journal/diet";
import { foldJournal, readSavedStates, savedStateOf } from "@hankweave-journal/state";
import { totalCost } from "@hankweave-journal/core";
import { resolveExec, type ExecLayout } from "@hankweave-journal/core";
import type { FleetEntry, JournalKind } from "./discover.js";

/** Lock state of an execution: `none` (no runtime.lock), `live`, `stale` (provably dead), `invalid` (unparseable). */
export type LockState = "none" | "live" | "stale" | "invalid";

/** Where the run facts of a row came from. */
export type RowSource = "fold" | "state.json" | "none";

/** One row of `fleet ls` (also what the batch filters test). Keys are stable; new ones may be added. */
export interface FleetRow {
  path: string;
  rel: string;
  kind: JournalKind;
  /** The code of a broken row, else null. */
  code: ErrorCode | null;
  message: string | null;
  runs: number | null;
  lastRunId: string | null;
  /** Status of the newest run (running / completed / failed / crashed), null without runs. */
  lastStatus: string | null;
  /** End time of the newest run (ISO), null while it runs or without runs. */
  lastEndTime: string | null;
  totalCost: number | null;
  events: number | null;
  storedBytes: number | null;
  lock: LockState;
  source: RowSource;
}

const NEWLINE = 10;

function emptyRow(e: FleetEntry): FleetRow {
  return {
    path: e.path, rel: e.rel, kind: e.kind, code: e.code, message: e.message, runs: null, lastRunId: null, lastStatus: null,
    lastEndTime: null, totalCost: null, events: null, storedBytes: null, lock: "none", source: "none",
  };
}

function runFacts(row: FleetRow, state: HankweaveState): void {
  row.runs = state.runs.length;
  const last = state.runs[0];
  row.lastRunId = last?.runId ?? null;
  row.lastStatus = last?.status ?? null;
  row.lastEndTime = last?.endTime ?? null;
  row.totalCost = totalCost(state);
}

/** Complete lines from byte `from` that JSON.parse accepts (what a sidecar's totalEvents counts). */
async function countEventsFrom(journal: string, from: number): Promise<number> {
  const fh = await openRegularForRead(journal);
  try {
    let n = 0;
    for await (const chunk of chunkLines(fileByteRead(fh, from), { line: 0, offset: from })) {
      if (!chunk.terminated) continue;
      const buf = chunk.bytes;
      for (let start = 0; start < buf.length;) {
        const end = buf.indexOf(NEWLINE, start);
        if (end > start) {
          try {
            JSON.parse(buf.toString("utf8", start, end));
            n++;
          } catch {
            // a corrupt line is not an event
          }
        }
        start = end + 1;
      }
    }
    return n;
  } finally {
    await fh.close();
  }
}

async function plainEvents(layout: ExecLayout, bytes: number): Promise<number> {
  const side = await readSidecarStatus(layout, bytes);
  if (side.status === "ok") return side.sidecar.totalEvents;
  if (side.status === "stale") return side.sidecar.totalEvents + (await countEventsFrom(layout.journal, side.sidecar.byteLength));
  return countEventsFrom(layout.journal, 0);
}

function lockOf(state: "absent" | "live" | "stale" | "invalid"): LockState {
  return state === "absent" ? "none" : state;
}

/**
 * The `fleet ls` row of a discovered entry (see the module comment for the sources). Read-only.
 * @example const row = await executionRow(entry); row.lastStatus // "completed"
 */
export async function executionRow(entry: FleetEntry, opts: { signal?: AbortSignal } = {}): Promise<FleetRow> {
  const row = emptyRow(entry);
  if (!entry.execution) return row;
  const layout = resolveExec(entry.path);
  try {
    row.lock = lockOf((await inspectLock(layout)).state);
  } catch (e) {
    row.lock = "invalid";
    void e;
  }
  if (entry.kind === "broken") return row;
  try {
    const saved = await readSavedStates(layout);
    const savedState = savedStateOf(saved);
    if (entry.kind === "none") {
      if (savedState) {
        runFacts(row, savedState);
        row.source = "state.json";
      }
      return row;
    }
    const reader = await openReader(layout);
    try {
      const fold = await foldJournal(reader, { saved: savedState, ...(opts.signal ? { signal: opts.signal } : {}) });
      runFacts(row, fold.state);
      row.source = "fold";
      if (entry.kind === "plain") {
        // The journal's size from discovery's stat (info() would stat it again and read the sidecar twice).
        row.storedBytes = entry.journalBytes;
        row.events = await plainEvents(layout, entry.journalBytes ?? 0);
      } else {
        row.storedBytes = (await reader.info()).storedBytes;
        row.events = entry.manifest?.totalEvents ?? null;
      }
    } finally {
      await reader.close();
    }
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    const je = isJournalError(e) ? e : ioError(e, entry.path);
    return { ...emptyRow(entry), lock: row.lock, kind: "broken", code: je.code, message: je.message };
  }
  return row;
}
