/**
 * The fold's fast path: each line is looked at in place in the reader's raw chunks.
 * A line of another type costs the newline search and the type sniff (no view, no string, no
 * object); a hot transition is read by `HotTransitionParser` and applied directly; every other
 * line goes through the reader's own `recordOfLine` (same parse, same findings, same torn tail),
 * all synchronously in line order, so the result is the one of `events({types})` fed to the folder.
 */
import type { JournalReader, LineRange } from "@hankweave-journal/core";
import { recordOfLine, typeFilter } from "@hankweave-journal/journal";
import { HotTransitionParser } from "./hot-transitions.js";
import type { StateFolder } from "./state-folder.js";

const NEWLINE = 10;

/**
 * Feed `folder` the lines of `range` whose type is in `types`, exactly as
 * `for await (rec of reader.events({...range, types, onFinding: addFinding})) folder.feed(rec)`,
 * reading the reader's raw chunks (`JournalReader.chunks`, the contract's fast path). Checks
 * `signal` once per chunk.
 */
export async function foldLines(
  reader: JournalReader, folder: StateFolder, types: readonly string[], range: LineRange, signal: AbortSignal | undefined,
): Promise<void> {
  const filter = typeFilter(types)!;
  const onFinding = folder.addFinding.bind(folder);
  const hot = new HotTransitionParser();
  for await (const chunk of reader.chunks(range)) {
    const buf = chunk.bytes;
    if (!chunk.terminated) {
      // The torn fragment: recordOfLine reports it.
      recordOfLine({ line: chunk.firstLine, offset: chunk.firstOffset, bytes: buf, terminated: false }, filter, onFinding);
      continue;
    }
    let line = chunk.firstLine;
    for (let start = 0; start < buf.length; line++) {
      const end = buf.indexOf(NEWLINE, start);
      const wanted = filter.sniffAt(buf, start, end);
      if (wanted !== false) {
        const t = wanted === true ? hot.match(buf, start, end) : undefined;
        if (t !== undefined) folder.applyTransition(t, hot.timestamp, { line, offset: chunk.firstOffset + start });
        else {
          const rec = recordOfLine({ line, offset: chunk.firstOffset + start, bytes: buf.subarray(start, end), terminated: true }, filter, onFinding);
          if (rec !== undefined) folder.feed(rec);
        }
      }
      start = end + 1;
    }
    if (signal?.aborted) throw signal.reason;
  }
}
