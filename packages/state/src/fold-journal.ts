/**
 * Streaming folds over a JournalReader: the whole journal, a line range, or a continuation of an
 * earlier fold. Only state-relevant lines are parsed (the reader sniffs `type` from raw bytes).
 */
import type { Finding, HankweaveState, JournalReader } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { FOLD_TYPES, NATIVE_FOLD_TYPES, StateFolder, type FoldResult } from "./state-folder.js";
import { foldLines } from "./fold-lines.js";
import { readSavedStates, savedStateOf, type SavedStates } from "./state-file.js";
import { type ExecRef, resolveExec } from "@hankweave-journal/core";

export interface FoldOptions {
  /** Last line to fold (inclusive). Default: to the end. */
  toLine?: number;
  /** First line to fold. Default 0 (set it with `folder` to continue an earlier fold). */
  fromLine?: number;
  /** Continue this folder instead of starting from the initial state. */
  folder?: StateFolder;
  /** A saved state.json to carry foreign clock fields and executionPlan from (ignored for native journals). */
  saved?: HankweaveState | null;
  /** Abort a long fold early (throws the signal's reason). */
  signal?: AbortSignal;
}

/** A fold plus the folder it ended with (to continue it). */
export interface FoldOutcome extends FoldResult {
  folder: StateFolder;
}

/** Decide the journal's origin from its first state-relevant event (a tiny scan). */
async function peekOrigin(reader: JournalReader): Promise<"native" | "foreign" | "empty"> {
  for await (const rec of reader.events({ types: FOLD_TYPES, fromLine: 0, onFinding: () => undefined })) {
    return rec.event.type === "plan.updated" ? "native" : "foreign";
  }
  return "empty";
}

/**
 * Fold the journal behind `reader` (lines `fromLine..toLine`, inclusive) into state.
 * Guarantees: streaming, memory bounded by the state plus the reader's window; never throws on
 * journal content (corrupt lines, invalid transitions become findings with line numbers); I/O
 * errors throw JournalError. Folding [0..k] then continuing [k+1..] equals one pass.
 * @example const { state, findings } = await foldJournal(await openReader(exec));
 */
export async function foldJournal(reader: JournalReader, opts: FoldOptions = {}): Promise<FoldOutcome> {
  const folder = opts.folder ?? new StateFolder();
  let origin = folder.journalOrigin;
  if (origin === "empty") origin = await peekOrigin(reader);
  // Native journals never need codon.started / state.snapshot: don't parse them.
  const types = origin === "native" ? NATIVE_FOLD_TYPES : FOLD_TYPES;
  const range: { fromLine?: number; toLine?: number } = {};
  if (opts.fromLine !== undefined) range.fromLine = opts.fromLine;
  if (opts.toLine !== undefined) range.toLine = opts.toLine;
  if (range.toLine !== undefined && range.toLine < (range.fromLine ?? 0)) {
    return { ...folder.result(opts.saved ?? null), folder };
  }
  // A plain journal is read whole through the raw chunks (a skipped line costs its newline search
  // and type sniff); a dieted one through events({types}), which never reads the CAS bodies of
  // lines it skips (its chunks would rehydrate every one).
  if (reader.kind === "plain") {
    await foldLines(reader, folder, types, range, opts.signal);
    return { ...folder.result(opts.saved ?? null), folder };
  }
  const onFinding = (f: Finding): void => folder.addFinding(f);
  let n = 0;
  for await (const rec of reader.events({ ...range, types, onFinding })) {
    folder.feed(rec);
    if (opts.signal && (++n & 0xfff) === 0 && opts.signal.aborted) throw opts.signal.reason;
  }
  return { ...folder.result(opts.saved ?? null), folder };
}

/** A fold of an execution directory with its saved state files. */
export interface ExecutionFold extends FoldOutcome {
  savedStates: SavedStates;
}

/**
 * Open `exec` through the transparent reader, load its saved state files (state.json, else .bak)
 * for carrying (unless `carry: false`), and fold. The reader is closed before returning.
 */
export async function foldExecution(
  exec: ExecRef,
  opts: Omit<FoldOptions, "saved" | "folder"> & { carry?: boolean } = {},
): Promise<ExecutionFold> {
  const l = resolveExec(exec);
  const savedStates = await readSavedStates(l);
  const reader = await openReader(l);
  try {
    const { carry, ...rest } = opts;
    const out = await foldJournal(reader, { ...rest, saved: carry === false ? null : savedStateOf(savedStates) });
    return { ...out, savedStates };
  } finally {
    await reader.close();
  }
}
