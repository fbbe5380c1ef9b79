/**
 * Time travel: the state "as of" a line number, an event id or an ISO time (format §4.4), always
 * the fold of a PREFIX of the journal, inclusive of the cursor's line.
 *
 * Rules (also in `state --help`):
 * - line number N: lines 0..N. Past the last line: LINE_OUT_OF_RANGE.
 * - event id: up to and including the FIRST line carrying that id (ids are not unique).
 * - ISO time T: up to the line before the first line whose timestamp is later than T. Timestamps
 *   may go backwards in foreign journals; a later line stamped ≤ T is NOT included (it was written
 *   after a line stamped > T), and the result says how many such lines exist.
 */
import { JournalError, type HankweaveState, type JournalReader } from "@hankweave-journal/core";
import { foldJournal, type FoldOutcome } from "./fold-journal.js";

/** A parsed `--at` value. */
export type Cursor = { kind: "line"; line: number } | { kind: "id"; id: string } | { kind: "time"; ms: number; text: string };

const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const EVENT_ID = /^\d+-[0-9a-z]{1,16}$/;

/** Parse a cursor: digits = line, ISO date/time = time, `<ms>-<base36>` = event id; else BAD_CURSOR. Pure. */
export function parseCursor(text: string): Cursor {
  const s = text.trim();
  if (/^\d+$/.test(s)) return { kind: "line", line: Number(s) };
  if (ISO_TIME.test(s)) {
    // A bare date or a time without zone is read as UTC (journal timestamps are UTC).
    const withZone = /T/.test(s) && !/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? `${s}Z` : s;
    const ms = Date.parse(withZone);
    if (!Number.isNaN(ms)) return { kind: "time", ms, text: s };
  }
  if (EVENT_ID.test(s)) return { kind: "id", id: s };
  throw new JournalError("BAD_CURSOR", `not a line number, event id or ISO time: ${JSON.stringify(text)}`, { actual: text },
    { hint: "use e.g. --at 120, --at 1772736420200-b2y6pzssd or --at 2026-03-05T18:47:00.200Z" });
}

/** Where a cursor landed. */
export interface ResolvedCursor {
  /** Last line included (inclusive); -1 when the prefix is empty (time before the first line). */
  toLine: number;
  /** For time cursors: lines after `toLine` stamped ≤ T (excluded by the prefix rule). */
  laterLinesAtOrBefore: number;
}

const ID_PREFIX = Buffer.from('{"id":"');
const TS_MARK = Buffer.from('","timestamp":"');

/** Sniff `timestamp` from a raw line without JSON.parse (lines are `{"id":..,"timestamp":..}` in order). */
function sniffTimestamp(bytes: Buffer): number | null {
  if (!bytes.subarray(0, ID_PREFIX.length).equals(ID_PREFIX)) return null;
  const at = bytes.indexOf(TS_MARK, ID_PREFIX.length);
  if (at < 0 || at > 200) return null;
  const start = at + TS_MARK.length;
  const end = bytes.indexOf(0x22, start);
  if (end < 0) return null;
  const ms = Date.parse(bytes.toString("latin1", start, end));
  return Number.isNaN(ms) ? null : ms;
}

/** Resolve a cursor to the last included line by scanning raw lines (no JSON.parse). */
export async function resolveCursor(reader: JournalReader, cursor: Cursor): Promise<ResolvedCursor> {
  if (cursor.kind === "line") {
    let last = -1;
    for await (const l of reader.lines({ fromLine: cursor.line, toLine: cursor.line })) last = l.line;
    if (last !== cursor.line) {
      throw new JournalError("LINE_OUT_OF_RANGE", `line ${cursor.line} is past the end of the journal`, { line: cursor.line });
    }
    return { toLine: cursor.line, laterLinesAtOrBefore: 0 };
  }
  if (cursor.kind === "id") {
    const prefix = Buffer.from(`{"id":${JSON.stringify(cursor.id)},`);
    for await (const l of reader.lines()) {
      if (l.terminated && l.bytes.subarray(0, prefix.length).equals(prefix) && (await reader.getLine(l.line)) !== null) {
        return { toLine: l.line, laterLinesAtOrBefore: 0 };
      }
    }
    throw new JournalError("BAD_CURSOR", `no line has the event id ${cursor.id}`, { actual: cursor.id });
  }
  let toLine = -1;
  let passed = false;
  let later = 0;
  for await (const l of reader.lines()) {
    if (!l.terminated) continue;
    const ms = sniffTimestamp(l.bytes);
    if (ms === null) {
      if (!passed) toLine = l.line;
      continue;
    }
    if (!passed && ms > cursor.ms) passed = true;
    if (!passed) toLine = l.line;
    else if (ms <= cursor.ms) later += 1;
  }
  return { toLine, laterLinesAtOrBefore: later };
}

/** `stateAt` result: the fold of the prefix plus where the cursor landed. */
export interface StateAt extends FoldOutcome {
  cursor: Cursor;
  resolved: ResolvedCursor;
}

/**
 * The state as of `cursor` (inclusive), per the rules in the module comment.
 * @example const { state } = await stateAt(reader, parseCursor("120"));
 */
export async function stateAt(reader: JournalReader, cursor: Cursor, opts: { saved?: HankweaveState | null } = {}): Promise<StateAt> {
  const resolved = await resolveCursor(reader, cursor);
  const fold = await foldJournal(reader, { toLine: resolved.toLine, saved: opts.saved ?? null });
  return { ...fold, cursor, resolved };
}
