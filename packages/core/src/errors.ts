/**
 * The one error type of hankweave-journal, with a stable UPPER_SNAKE `code`.
 *
 * Guarantees: `code` never changes meaning once released; `details` carries structured context
 * (path, line, byteOffset, expected, actual); `hint` says what a person can do next. Messages may
 * change between versions; tests and callers branch on `code`, never on the message.
 *
 * @example
 *   throw new JournalError("CORRUPT_LINE", "line 12 is not JSON", { path, line: 12, byteOffset: 4096 });
 */
export class JournalError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly hint: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    details: ErrorDetails = {},
    options: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "JournalError";
    this.code = code;
    this.details = details;
    this.hint = options.hint;
  }

  /** A stable, JSON-friendly view (what `--json` prints). */
  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails; hint?: string } {
    const out: { code: ErrorCode; message: string; details: ErrorDetails; hint?: string } = {
      code: this.code,
      message: this.message,
      details: this.details,
    };
    if (this.hint !== undefined) out.hint = this.hint;
    return out;
  }
}

/** Structured context of an error or finding. All optional; unknown keys allowed. */
export interface ErrorDetails {
  path?: string;
  line?: number;
  byteOffset?: number;
  expected?: unknown;
  actual?: unknown;
  [key: string]: unknown;
}

/** True when `e` is a JournalError (optionally with one of the given codes). */
export function isJournalError(e: unknown, ...codes: ErrorCode[]): e is JournalError {
  return e instanceof JournalError && (codes.length === 0 || codes.includes(e.code));
}

/**
 * Every stable code, with a one-line meaning. The README's table of codes is generated from this
 * object (see `tools/src/error-table.ts`), so adding a code here documents it.
 */
export const ERROR_CODES = {
  // --- paths and files
  EXEC_NOT_FOUND: "the execution directory (or its .hankweave/) does not exist",
  JOURNAL_NOT_FOUND: "neither events.jsonl nor a dieted pair exists",
  NOT_A_REGULAR_FILE: "a path where a regular file is expected is a directory, FIFO, socket or device",
  IO_ERROR: "an operating-system error while reading or writing",
  OUTPUT_IN_EXECUTION: "an output path (-o) names or resolves to a file inside an execution's .hankweave/ directory: refused, it could overwrite a journal or state",
  NO_SPACE: "the file system is full (no space or no inodes left, ENOSPC/EDQUOT); nothing was changed",
  READ_ONLY: "the file system is mounted read-only (EROFS); nothing was changed",
  PERMISSION_DENIED: "the operating system refused access to a file or directory (EACCES/EPERM)",
  SYMLINK_REFUSED: "a file inside .hankweave/ that would be written is a symbolic link; writes never follow links",
  WORKER_FAILED: "a worker thread died or failed without a coded error",
  NATIVE_MODULE_UNAVAILABLE: "a native module (better-sqlite3, zstd-napi, @mongodb-js/zstd, @duckdb/node-api) did not load: not built, or built for another Node.js",
  // --- journal content
  EMPTY_JOURNAL: "the journal file is empty",
  CORRUPT_LINE: "a complete line is not a JSON object with id, timestamp, type and data",
  INVALID_UTF8: "a line is not valid UTF-8",
  TORN_TAIL: "the journal does not end with a newline: an unterminated final fragment (a write cut short); it is not an event",
  LINE_OUT_OF_RANGE: "a requested line number is past the end of the journal",
  // --- appending
  CONNECTION_STATE_EVENT: "connection-state events (server.ready, pong, history.batch, incomplete.codon) are never journaled",
  INVALID_EVENT: "an event does not match the envelope or its payload schema",
  JOURNAL_DIETED: "the directory holds a dieted journal; appends and repairs need events.jsonl",
  JOURNAL_CLOSED: "the journal writer was closed",
  JOURNAL_WRITER_FAILED: "an earlier write of this journal writer failed; the writer refuses further appends",
  TORN_FRAGMENT_CONFLICT: "a quarantine file events.jsonl.torn-<offset> already exists with different bytes",
  // --- sidecar
  SIDECAR_INVALID: "events.meta.json is not valid JSON of the expected shape",
  SIDECAR_MISMATCH: "events.meta.json disagrees with the journal (byteLength larger than the file, or counts differ)",
  // --- lock
  LOCK_HELD: "runtime.lock is held by a live process (or a heartbeat newer than 120 s)",
  LOCK_LOST: "runtime.lock no longer holds our lockId",
  LOCK_INVALID: "runtime.lock cannot be parsed",
  // --- state
  STATE_CORRUPT: "state.json (or .bak) is not valid state JSON",
  STATE_MISMATCH: "state.json differs from the fold of the journal",
  INVALID_TRANSITION: "a state transition is not allowed by the transition map (the reducer drops it)",
  MISSING_METADATA: "a CodonTransitioned lacks the metadata its target status requires (dropped)",
  UNKNOWN_RUN: "a transition references a run that does not exist",
  UNKNOWN_CODON: "a transition references a codon with no record in its run (a no-op; a warning, because the reference runtime journals SentinelStatesUpdated under a loop's base codon id)",
  NO_TARGET_RECORD: "a transition's codon has records, but none its rule targets (wrong status): it changes nothing (info; warning for CodonTransitioned)",
  MALFORMED_TRANSITION: "a state transition lacks a field the reducer needs (transition {type, data}), has the wrong type, or its transitionType/runId/codonId copies disagree",
  UNKNOWN_TRANSITION_TYPE: "a state transition's type is not one of the 14 StateTransition types",
  BAD_CURSOR: "an --at / cursor value is not a line number, event id or ISO time of this journal",
  STATE_OTHER_EXECUTION: "a saved state.json shares no runId with the journal: it belongs to another execution (nothing carried from it)",
  // --- diet / restore / CAS
  RUN_NOT_FINISHED: "the last run did not end completed or failed (use --force to override)",
  ALREADY_DIETED: "the directory is already dieted",
  NOTHING_TO_RESTORE: "restore found no dieted journal: the journal is plain already, or there is none",
  MANIFEST_INVALID: "journal.meta.json is missing, malformed or inconsistent",
  MANIFEST_MISMATCH: "the restored bytes do not match the manifest (size or SHA-256)",
  HALF_PAIR: "only one of events.jsonl.zst and journal.meta.json exists",
  CAS_MISSING: "a content-addressed blob referenced by the journal is missing",
  CAS_CORRUPT: "a content-addressed blob does not decompress to its SHA-256",
  CAS_BAD_REF: "a contentRef has an invalid sha256 (not 64 lowercase hex) or ref",
  ZSTD_CORRUPT: "a .zst file is truncated, empty or not zstd",
  ZSTD_TOO_LARGE: "a zstd frame claims a decompressed size beyond the allowed bound",
  JOURNAL_CHANGED: "events.jsonl changed while an operation ran",
  RESTORE_CONFLICT: "events.jsonl exists and differs from the dieted journal; restore never overwrites",
  CONTENT_REF_PRESENT: "the journal already holds a cas-shaped contentRef at a body site: a compatible diet could not be restored faithfully",
  DIET_VERIFY_FAILED: "the written diet did not verify against the original",
  EXT_TRUNCATED: "an extended diet's container (events.jsonl.zst) is truncated: a record, pack frame or table ends past the file",
  EXT_INDEX_INVALID: "an extended diet's block or body index lies: offsets, sizes or line counts that do not fit the container",
  EXT_BODY_SIZE: "an extended diet's pack frame decodes to more (or fewer) bytes than its index declares",
  EXT_CORRUPT: "an extended diet's block or pack does not decode to what its index and checksums say",
  EXT_SNAPSHOT_INVALID: "an extended diet's cursor snapshot (where a block's streams stand every 128 lines) does not match its streams",
  // --- audit / index / query
  QUERY_INVALID: "the SQL is not valid or is not read-only",
  DUPLICATE_ID: "audit finding: an event id already used by an earlier line (ids are not unique by contract; order is file position)",
  TIME_BACKWARDS: "audit finding: a line's timestamp is earlier than the previous event's",
  BAD_TIMESTAMP: "audit finding: a timestamp is not an ISO-8601 time",
  RESULTING_STATE_MISMATCH: "audit finding: a journaled resultingState differs from the recomputed one (details.diffs: field, journaled, recomputed, delta = journaled − recomputed)",
  RESULTING_STATE_MISSING: "audit finding: a state.transition carries no resultingState",
  DUPLICATE_RUN: "audit finding: RunStarted for a run id that already exists",
  DUPLICATE_ACTIVE_CODON: "audit finding: CodonStarted while the run already has a non-terminal record for that codon",
  EVENT_AFTER_RUN_END: "audit finding: a transition for a run after its RunCompleted / RunFailed / RunCrashed",
  SIDECAR_STALE: "verify finding: events.meta.json covers only a prefix of the file (normal between sidecar writes)",
  RESTORE_MISMATCH: "verify finding: a restore dry run does not reproduce originalSha256 / originalBytes",
  STATE_UNREADABLE: "verify finding: state.json exists but cannot be parsed",
  INDEX_STALE: "the index does not match the journal and must be rebuilt",
  INDEX_BUSY: "another index build of this execution is running and did not finish in time",
  QUERY_TOO_LARGE: "a query returned more rows than --max-rows, needed more memory than --max-memory, or passed SQLite's largest value",
  QUERY_TIMEOUT: "a query ran longer than --timeout",
  // --- explain (summary, blame, export)
  BLAME_PATH_INVALID: "a blame path is not a valid path into the state (see docs/explain.md for both spellings)",
  BLAME_PATH_NOT_FOUND: "a blame path names a run, codon record or field the folded state does not have",
  EXPORT_FORMAT_UNKNOWN: "export was asked for a format it does not write (known: parquet, ndjson, trace)",
  EXPORT_DIR_INVALID: "an export's output directory is not a directory, is neither empty nor an export, or holds an export of another format or a newer schema",
  EXPORT_FAILED: "exporting one execution failed for a reason without a more specific code (the message says which)",
  // --- fleet (discovery and batch work over many executions)
  FLEET_ROOT_INVALID: "a fleet root (fleet ls <root>, --all <root>) does not exist or is not a directory",
  FLEET_TOO_DEEP: "a folder under a fleet root lies deeper than discovery's depth bound (--max-depth): not searched",
  // --- tools (generator, bench)
  GENERATE_TARGET_EXISTS: "the generator's output directory already holds a journal; it never overwrites one",
  // --- CLI
  USAGE: "bad command-line usage",
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;
