/**
 * The transparent reader factory every tool uses (SPEC §3): events.jsonl while it exists, else
 * the dieted pair, else JOURNAL_NOT_FOUND (HALF_PAIR for half a pair).
 */
import { statSync, type Stats } from "node:fs";
import { JournalError, layoutOf, type JournalReader } from "@hankweave-journal/core";
import { openPlainReader, type JournalPresence } from "@hankweave-journal/journal";
import { openDietedReader } from "./dieted-reader.js";

/**
 * Open the journal of `exec`: events.jsonl while it exists, else the dieted pair.
 *
 * Guarantees: the same events, line numbers, offsets and bytes whichever form is on disk.
 *
 * @example const r = await openReader("/runs/x"); for await (const rec of r.events()) …; await r.close();
 */
export async function openReader(exec: string): Promise<JournalReader> {
  const presence = journalPresenceSync(exec);
  const layout = layoutOf(exec);
  switch (presence.kind) {
    case "plain":
      return openPlainReader(exec);
    case "dieted":
      return openDietedReader(exec);
    case "half":
      throw new JournalError("HALF_PAIR", `${layout.eventsDir} has no events.jsonl and only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair`, { path: layout.eventsDir }, {
        hint: "the other half is missing; restore it from a backup",
      });
    default:
      throw new JournalError(presence.execExists ? "JOURNAL_NOT_FOUND" : "EXEC_NOT_FOUND", `no journal in ${exec}`, { path: layout.eventsDir });
  }
}

/**
 * The journal package's `journalPresence`, with synchronous stats: three stats of a directory
 * entry cost microseconds, three threadpool round trips cost far more on the path of a one-line
 * read. Same answers and errors (tested side by side).
 */
export function journalPresenceSync(exec: string): JournalPresence {
  const l = layoutOf(exec);
  if (statOrUndefinedSync(l.journal)) return { kind: "plain" };
  const zst = statOrUndefinedSync(l.dietedJournal);
  const manifest = statOrUndefinedSync(l.manifest);
  if (zst && manifest) return { kind: "dieted" };
  if (zst) return { kind: "half", present: "zst" };
  if (manifest) return { kind: "half", present: "manifest" };
  return { kind: "none", execExists: statOrUndefinedSync(l.exec)?.isDirectory() === true };
}

function statOrUndefinedSync(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ENOENT" || err.code === "ENOTDIR") return undefined;
    throw new JournalError("IO_ERROR", `${err?.code ?? "error"} on ${path}: ${err?.message ?? String(e)}`, {
      path,
      errno: err?.code,
    }, { cause: e });
  }
}
