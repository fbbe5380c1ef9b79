/**
 * The fold's fast path over a plain journal: each line is looked at in place in the read chunk.
 * A line of another type costs the newline search and the type sniff (no view, no string, no
 * object); a hot transition is read by `HotTransitionParser` and applied directly; every other
 * line goes through the reader's own `recordOfLine` (same parse, same findings, same torn tail),
 * all synchronously in line order, so the result is the one of `events({types})` fed to the folder.
 */
import type { JournalReader, LineRange } from "@hankweave-journal/core";
import { recordOfLine, typeFilter } from "@hankweave-journal/journal";
import { HotTransitionParser } from "./hot-transitions.js";
import type { StateFolder } from "./state-folder.js";

/** What `PlainReader.visitLines` calls per physical line (`buf[start, end)`, no `\n`). */
type LineVisit = (buf: Buffer, start: number, end: number, line: number, offset: number, terminated: boolean) => undefined;

/** A reader that can show its lines in place (the plain reader; the dieted one cannot). */
export interface LineVisitingReader extends JournalReader {
  visitLines(visit: LineVisit, range?: LineRange): AsyncGenerator<void>;
}

/** Whether `reader` offers the in-place line visit of the plain reader. */
export function canVisitLines(reader: JournalReader): reader is LineVisitingReader {
  return typeof (reader as Partial<LineVisitingReader>).visitLines === "function";
}

/**
 * Feed `folder` the lines of `range` whose type is in `types`, exactly as
 * `for await (rec of reader.events({...range, types, onFinding: addFinding})) folder.feed(rec)`.
 * Checks `signal` once per read chunk.
 */
export async function foldLines(
  reader: LineVisitingReader, folder: StateFolder, types: readonly string[], range: LineRange, signal: AbortSignal | undefined,
): Promise<void> {
  const filter = typeFilter(types)!;
  const onFinding = folder.addFinding.bind(folder);
  const hot = new HotTransitionParser();
  const visit: LineVisit = (buf, start, end, line, offset, terminated) => {
    if (terminated) {
      const wanted = filter.sniffAt(buf, start, end);
      if (wanted === false) return undefined;
      if (wanted === true) {
        const t = hot.match(buf, start, end);
        if (t !== undefined) {
          folder.applyTransition(t, hot.timestamp, { line, offset });
          return undefined;
        }
      }
    }
    const rec = recordOfLine({ line, offset, bytes: buf.subarray(start, end), terminated }, filter, onFinding);
    if (rec !== undefined) folder.feed(rec);
    return undefined;
  };
  for await (const _ of reader.visitLines(visit, range)) {
    if (signal?.aborted) throw signal.reason;
  }
}
