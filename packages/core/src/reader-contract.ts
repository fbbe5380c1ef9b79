/**
 * The reader contract shared by the plain journal (`@hankweave-journal/journal`) and the dieted
 * journal (`@hankweave-journal/diet`). Consumers (state, audit, CLI) depend on this interface
 * only, and get an implementation from `openReader(exec)` in `@hankweave-journal/diet`, which
 * prefers `events.jsonl` while it exists (SPEC §3).
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

/** The transparent reader interface (SPEC §3). */
export interface JournalReader {
  readonly kind: "plain" | "dieted";
  readonly exec: string;
  /** Every physical line in order (blank, corrupt and the torn fragment included). */
  lines(range?: LineRange): AsyncIterable<RawLine>;
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
