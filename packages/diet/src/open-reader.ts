/**
 * The transparent reader factory every tool uses (format §3): events.jsonl while it exists, else
 * the dieted pair, else JOURNAL_NOT_FOUND (HALF_PAIR for half a pair).
 */
import { JournalError, resolveExec, type ExecRef, type JournalReader } from "@hankweave-journal/core";
import { journalPresenceSync, openPlainReader } from "@hankweave-journal/journal";
import { openDietedReader } from "./dieted-reader.js";
import { isExtDiet } from "./ext/ext-diet.js";
import { openExtReader } from "./ext/ext-reader.js";

/**
 * Open the journal of `exec`: events.jsonl while it exists, else the dieted pair.
 *
 * Guarantees: the same events, line numbers, offsets and bytes whichever form is on disk.
 *
 * @example const r = await openReader("/runs/x"); for await (const rec of r.events()) …; await r.close();
 */
export async function openReader(exec: ExecRef): Promise<JournalReader> {
  const layout = resolveExec(exec);
  const presence = journalPresenceSync(layout);
  switch (presence.kind) {
    case "plain":
      return openPlainReader(layout);
    case "dieted":
      return isExtDiet(layout) ? openExtReader(layout) : openDietedReader(layout);
    case "half":
      throw new JournalError("HALF_PAIR", `${layout.eventsDir} has no events.jsonl and only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair`, { path: layout.eventsDir }, {
        hint: "the other half is missing; restore it from a backup",
      });
    default:
      throw new JournalError(presence.execExists ? "JOURNAL_NOT_FOUND" : "EXEC_NOT_FOUND", `no journal in ${layout.exec}`, { path: layout.eventsDir });
  }
}
