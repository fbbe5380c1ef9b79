/**
 * The reader contract shared by the plain journal (`@hankweave-journal/journal`) and the dieted
 * journal (`@hankweave-journal/diet`). Consumers (state, audit, CLI) depend on this interface
 * only, and get an implementation from `openReader(exec)` in `@hankweave-journal/diet`, which
 * prefers `events.jsonl` while it exists (format §3).
 *
 * Guarantees of every implementation:
 * - line numbers count physical `\n`-terminated lines from 0 (blank and corrupt ones included);
 * - `offset` is the byte offset of the line in the original `events.jsonl` (also when dieted);
 * - `bytes` are the original line bytes without the `\n` (after rehydration when dieted);
 * - memory is bounded by the largest line plus a fixed window, whatever the journal size;
 * - blank lines are skipped silently; unparseable complete lines and an unterminated final
 *   fragment are reported through `onFinding` (never thrown); I/O errors and a missing or corrupt
 *   CAS body throw a JournalError (never a silently partial event).
 */
import type { ErrorDetails } from "./errors.js";

/** The envelope of one journal line: `{id, timestamp, type, data}` in that key order. */
export interface JournalEvent {
  id: string;
  timestamp: string;
  type: string;
  data: unknown;
}

/** One parsed journal line. */
export interface JournalRecord {
  /** Physical line number, from 0. */
  line: number;
  /** Byte offset of the line's first byte in the original events.jsonl. */
  offset: number;
  /** The line's bytes without the trailing `\n`. A view valid until the iterator advances: copy (`Buffer.from`) to keep. */
  bytes: Buffer;
  event: JournalEvent;
}

/** One physical line, unparsed. */
export interface RawLine {
  line: number;
  offset: number;
  /** Bytes without the `\n`. Same lifetime rule as JournalRecord.bytes. */
  bytes: Buffer;
  /** False only for an unterminated final fragment (a torn tail). */
  terminated: boolean;
}

/** A line start in the original events.jsonl: its byte offset and its number (from an earlier scan). */
export interface LinePosition {
  line: number;
  offset: number;
}

/**
 * A run of whole physical lines in one buffer: the bulk readers' fast path (`JournalReader.chunks`).
 * The caller splits it on `\n` itself; line `firstLine + k` is the k-th line of `bytes`.
 */
export interface LineChunk {
  /**
   * The lines' original bytes, each followed by its `\n`; when `terminated` is false, exactly the
   * unterminated final fragment (one line, no `\n`). Blank and corrupt lines are included as they are.
   */
  bytes: Buffer;
  /** Number of the first line in `bytes`. */
  firstLine: number;
  /** Offset of the first line in the original events.jsonl (line k starts at firstOffset + its index in `bytes`). */
  firstOffset: number;
  /** Number of lines in `bytes` (1 for the torn fragment). */
  lines: number;
  /** False only for the last chunk of a journal that does not end with `\n` (a torn tail). */
  terminated: boolean;
}

/** Options of `JournalReader.chunks`. */
export interface ChunkOptions extends LineRange {
  /**
   * Start reading at this line start instead of line 0 (a position an earlier scan of the same
   * journal gave, e.g. where an incremental index stopped). Trusted, not checked. `fromLine`
   * defaults to `start.line`.
   */
  start?: LinePosition;
  /** Bytes per chunk, at least (a chunk is larger when one line is longer). Default: the reader's choice. */
  chunkBytes?: number;
  /**
   * Each chunk in its own SharedArrayBuffer that the caller owns (may keep it, post it to a worker
   * thread). Default false: chunks may be views of reused buffers, valid until the iterator advances.
   */
  shared?: boolean;
}

export type FindingSeverity = "error" | "warning" | "info";

/** Something a read-only tool noticed; never thrown. `code` is stable (UPPER_SNAKE). */
export interface Finding {
  code: string;
  severity: FindingSeverity;
  message: string;
  line?: number;
  byteOffset?: number;
  details?: ErrorDetails;
}

export interface LineRange {
  /** First line to yield (inclusive). Default 0. */
  fromLine?: number;
  /** Last line to yield (inclusive). Default: to the end. */
  toLine?: number;
}

export interface ScanOptions extends LineRange {
  /**
   * Only parse lines whose `type` (sniffed from the raw bytes, without JSON.parse) is in this
   * list; other lines are skipped unparsed. Lines whose type cannot be sniffed are parsed.
   */
  types?: readonly string[];
  /** Receives corrupt lines and a torn tail, in file order. */
  onFinding?: (finding: Finding) => void;
}

/** What a reader knows about its journal without a full scan. */
export interface JournalInfo {
  kind: "plain" | "dieted";
  /** Size in bytes of the (original) events.jsonl. */
  bytes: number;
  /** Bytes on disk (events.jsonl, or pointer journal + CAS + manifest). */
  storedBytes: number;
  /** Number of physical lines when known without a scan (dieted manifests know), else null. */
  lines: number | null;
  /** Event-schema version when known (sidecar or manifest), else null. */
  eventSchemaVersion: number | null;
}

export interface PageResult {
  records: JournalRecord[];
  /** The line number to pass as the next cursor, or null at the end. */
  nextLine: number | null;
}

/** The transparent reader interface (format §3). */
export interface JournalReader {
  readonly kind: "plain" | "dieted";
  readonly exec: string;
  /** Every physical line in order (blank, corrupt and the torn fragment included). */
  lines(range?: LineRange): AsyncIterable<RawLine>;
  /**
   * The physical lines of the range as raw chunks of whole lines, in order, with their line numbers
   * and original offsets: the fast path of readers that look at every line (audit, index, rebuild).
   * Nothing is parsed and nothing is reported: the caller classifies blank, corrupt and torn lines
   * (the same bytes `lines()` yields, split on `\n`). Memory: the largest line plus a few chunks.
   */
  chunks(opts?: ChunkOptions): AsyncIterable<LineChunk>;
  /** Parsed events in file order; findings through `opts.onFinding`. */
  events(opts?: ScanOptions): AsyncIterable<JournalRecord>;
  /** The event on line `line`; null when that line is blank or corrupt; throws LINE_OUT_OF_RANGE past the end. Records returned own their bytes. */
  getLine(line: number): Promise<JournalRecord | null>;
  /** The last `n` events (fewer if the journal has fewer). Records own their bytes. */
  tail(n: number): Promise<JournalRecord[]>;
  /** Up to `limit` events starting at line `fromLine`. Records own their bytes. */
  page(fromLine: number, limit: number): Promise<PageResult>;
  info(): Promise<JournalInfo>;
  close(): Promise<void>;
}
