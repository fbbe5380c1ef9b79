/**
 * Read-side file-system checks shared by the reader, writer, repair and lock: what the directory
 * holds, refusal of non-regular files (a FIFO would block an open). Error wrapping, directory fsync
 * and everything that writes live in `durable-file.ts`.
 */
import { closeSync, constants as FS, fstatSync, openSync, statSync, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { JournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { ioError, notRegular } from "./durable-file.js";

/** What an execution directory holds, journal-wise. */
export type JournalPresence =
  | { kind: "plain" }
  | { kind: "dieted" }
  | { kind: "half"; present: "zst" | "manifest" }
  | { kind: "none"; execExists: boolean };

/** Stat without following into errors: undefined when the path does not exist. */
export async function statOrUndefined(path: string): Promise<import("node:fs").Stats | undefined> {
  try {
    return await fsp.stat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw ioError(e, path);
  }
}

/** `statOrUndefined`, synchronous. */
export function statOrUndefinedSync(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" || (e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw ioError(e, path);
  }
}

/**
 * Which journal files `exec` holds (events.jsonl wins whenever it exists). Synchronous: at most
 * four stats of a directory entry cost microseconds each, where every threadpool round trip costs
 * more than the stat itself on a loaded machine (this is on the path of every open, one-line reads
 * included).
 */
export function journalPresenceSync(exec: ExecRef): JournalPresence {
  const l = resolveExec(exec);
  if (statOrUndefinedSync(l.journal)) return { kind: "plain" };
  const zst = statOrUndefinedSync(l.dietedJournal);
  const manifest = statOrUndefinedSync(l.manifest);
  if (zst && manifest) return { kind: "dieted" };
  if (zst) return { kind: "half", present: "zst" };
  if (manifest) return { kind: "half", present: "manifest" };
  return { kind: "none", execExists: statOrUndefinedSync(l.exec)?.isDirectory() === true };
}

/** Which journal files `exec` holds, for async callers (the same synchronous checks). */
export async function journalPresence(exec: ExecRef): Promise<JournalPresence> {
  return journalPresenceSync(exec);
}

/** Throw JOURNAL_NOT_FOUND / NOT_A_REGULAR_FILE unless `path` (followed through symlinks: reads may) is a regular file. */
export async function requireRegularFile(path: string): Promise<import("node:fs").Stats> {
  const st = await statOrUndefined(path);
  if (!st) throw new JournalError("JOURNAL_NOT_FOUND", `no such file: ${path}`, { path });
  if (!st.isFile()) throw notRegular(path, st);
  return st;
}

/**
 * Open a regular file for reading. Checks with stat first and opens with O_NONBLOCK so that a FIFO
 * swapped in between can never block the open, then re-checks the opened descriptor with fstat.
 */
export async function openRegularForRead(path: string): Promise<FileHandle> {
  await requireRegularFile(path);
  let fh: FileHandle;
  try {
    fh = await fsp.open(path, FS.O_RDONLY | FS.O_NONBLOCK);
  } catch (e) {
    throw ioError(e, path);
  }
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw notRegular(path, st);
  }
  return fh;
}

/**
 * `openRegularForRead`, synchronous, returning a descriptor: the same checks and errors (stat,
 * O_NONBLOCK open, fstat re-check). For open paths where a threadpool round trip costs more than
 * the open itself (a one-line read of a dieted journal).
 */
export function openRegularSync(path: string): number {
  const st = statOrUndefinedSync(path);
  if (!st) throw new JournalError("JOURNAL_NOT_FOUND", `no such file: ${path}`, { path });
  if (!st.isFile()) throw notRegular(path, st);
  let fd: number;
  try {
    fd = openSync(path, FS.O_RDONLY | FS.O_NONBLOCK);
  } catch (e) {
    throw ioError(e, path);
  }
  const fst = fstatSync(fd);
  if (!fst.isFile()) {
    closeSync(fd);
    throw notRegular(path, fst);
  }
  return fd;
}

/** Throw the error a reader or writer gives when `exec` has no events.jsonl. */
export function missingJournalError(exec: ExecRef, presence: JournalPresence, forWriting: boolean): JournalError {
  const l = resolveExec(exec);
  if (presence.kind === "half") {
    return new JournalError("HALF_PAIR", `${l.eventsDir} has no events.jsonl and only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair`, { path: l.eventsDir });
  }
  if (presence.kind === "dieted") {
    return new JournalError(
      "JOURNAL_DIETED",
      `${l.eventsDir} holds a dieted journal (events.jsonl.zst + journal.meta.json), not events.jsonl`,
      { path: l.journal },
      { hint: forWriting ? "restore the journal first: hankweave-journal restore <exec>" : "use the transparent reader (openReader) or restore first" },
    );
  }
  if (presence.kind === "none" && !presence.execExists) {
    return new JournalError("EXEC_NOT_FOUND", `execution directory not found: ${l.exec}`, { path: l.exec });
  }
  return new JournalError("JOURNAL_NOT_FOUND", `no journal in ${l.eventsDir}`, { path: l.journal });
}
