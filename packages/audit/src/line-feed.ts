/**
 * Feeding raw journal lines to the audit fold one by one (dieted journals; plain journals go
 * through parse-ahead.ts). Findings (torn tail, corrupt lines, invalid UTF-8) are those of the
 * reader's `recordOfLine`, in the same order.
 */
import * as fsp from "node:fs/promises";
import type { JournalReader, RawLine } from "@hankweave-journal/core";
import { isBlankLine, parseEventLine, scanRawLineBatches, tornTailFinding, type ScanStart } from "@hankweave-journal/journal";
import type { AuditFold } from "./audit-fold.js";

/** Read size of the plain-journal scan (fewer awaits than the reader's 1 MiB chunks). */
const SCAN_CHUNK_BYTES = 4 * 1024 * 1024;
/** Lines per batch when a dieted journal's lines are regrouped. */
const DIETED_BATCH_LINES = 1024;

/**
 * Give one raw line to `fold`: skip blank lines, report a torn tail or a corrupt line as the reader
 * would, parse the rest with `parseEventLine`.
 *
 * Guarantees: the fold sees exactly what `reader.events({onFinding})` would have given it (same
 * events, same findings, same order).
 * @example for await (const raw of reader.lines()) feedRawLine(fold, raw);
 */
export function feedRawLine(fold: AuditFold, raw: RawLine): void {
  if (!raw.terminated) {
    fold.finding(tornTailFinding(raw));
    return;
  }
  const bytes = raw.bytes;
  if (bytes.length === 0 || isBlankLine(bytes)) return;
  const parsed = parseEventLine(bytes, raw.line, raw.offset);
  if (!parsed.ok) fold.finding(parsed.finding);
  else fold.event({ line: raw.line, offset: raw.offset, size: bytes.length, event: parsed.event });
}

/**
 * The raw lines of `reader`'s journal from `start`, one array per read chunk: a plain journal is
 * scanned directly (one await per chunk, not per line), a dieted one goes through `reader.lines()`.
 * Views in a batch are valid until the next batch is requested.
 */
export async function* rawLineBatches(reader: JournalReader, journalPath: string, start: ScanStart = { offset: 0, line: 0 }): AsyncGenerator<RawLine[]> {
  if (reader.kind === "plain") {
    const fh = await fsp.open(journalPath, "r");
    try {
      yield* scanRawLineBatches(fh, start, SCAN_CHUNK_BYTES);
    } finally {
      await fh.close();
    }
    return;
  }
  if (start.offset !== 0 || start.line !== 0) throw new Error("rawLineBatches: a dieted journal is read from line 0");
  let batch: RawLine[] = [];
  for await (const raw of reader.lines()) {
    batch.push({ line: raw.line, offset: raw.offset, bytes: Buffer.from(raw.bytes), terminated: raw.terminated });
    if (batch.length >= DIETED_BATCH_LINES) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
