/**
 * The transparent reader factory every tool uses (format §3): events.jsonl while it exists, else
 * the dieted pair, else JOURNAL_NOT_FOUND (HALF_PAIR for half a pair).
 */
import { JournalError, resolveExec, type ExecRef, type JournalReader } from "@hankweave-journal/core";
import { journalPresenceSync, openPlainReader } from "@hankweave-journal/journal";
import { openDietedReader } from "./dieted-reader.js";
import { extInfoOfJson } from "./ext/ext-source.js";
import { openExtReader } from "./ext/ext-reader.js";
import { manifestOf, readManifestJson } from "./manifest.js";

/**
 * Open the journal of `exec`: events.jsonl while it exists, else the dieted pair.
 *
 * Guarantees: the same events, line numbers, offsets and bytes whichever form is on disk.
 * A dieted pair's manifest is read and parsed once (its kind and its checks from the same bytes).
 *
 * @example const r = await openReader("/runs/x"); for await (const rec of r.events()) …; await r.close();
 */
export async function openReader(exec: ExecRef): Promise<JournalReader> {
  const layout = resolveExec(exec);
  const presence = journalPresenceSync(layout);
  switch (presence.kind) {
    case "plain":
      return openPlainReader(layout);
    case "dieted": {
      // NOT_A_REGULAR_FILE, MANIFEST_INVALID (missing, not JSON) or IO_ERROR, as either reader gives.
      const json = readManifestJson(layout.manifest);
      return extInfoOfJson(json) !== null ? openExtReader(layout, json) : openDietedReader(layout, manifestOf(json, layout.manifest));
    }
    case "half":
      throw new JournalError("HALF_PAIR", `${layout.eventsDir} has no events.jsonl and only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair`, { path: layout.eventsDir }, {
        hint: "the other half is missing; restore it from a backup",
      });
    default:
      throw new JournalError(presence.execExists ? "JOURNAL_NOT_FOUND" : "EXEC_NOT_FOUND", `no journal in ${layout.exec}`, { path: layout.eventsDir });
  }
}
