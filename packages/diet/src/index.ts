// STUB — owned by the diet work (issue 4). `openReader` is the transparent reader factory.
import type { JournalReader } from "@hankweave-journal/core";
import { openPlainReader } from "@hankweave-journal/journal";

/** Open the journal of `exec`: events.jsonl while it exists, else the dieted pair (SPEC §3). */
export async function openReader(exec: string): Promise<JournalReader> {
  return openPlainReader(exec);
}
