/**
 * The last steps both diets share (format §5.1): re-check that events.jsonl is unchanged and the
 * lock still ours, rename the verified pair into place, fsync the directory, and only then delete
 * events.jsonl and events.meta.json. A crash at any step leaves the intact original or a complete
 * verified diet; the hook names are the ones the crash tests kill at.
 */
import * as fsp from "node:fs/promises";
import type { Stats } from "node:fs";
import { JournalError, type ExecLayout } from "@hankweave-journal/core";
import { fsyncDir } from "@hankweave-journal/journal";
import type { DietHook } from "./diet.js";

/** Removes a file if it is there; a temp that cannot be removed is swept at the next diet. */
export async function rmQuiet(path: string): Promise<void> {
  await fsp.rm(path, { force: true }).catch(() => undefined);
}

/** Whether `path` is still the file `before` described (same inode, size and mtime). */
export async function sameFile(path: string, before: Stats): Promise<boolean> {
  const now = await fsp.stat(path).catch(() => undefined);
  return now !== undefined && now.ino === before.ino && now.size === before.size && now.mtimeMs === before.mtimeMs;
}

/**
 * Publishes the verified temps of a diet and removes the plain journal. `published` is called as
 * soon as the pair is in place (the caller then must not remove the temps' successors);
 * `closeJournal` closes the caller's handle on events.jsonl before it is deleted.
 */
export async function publishPair(
  layout: ExecLayout,
  before: Stats,
  lock: { stillOurs(): Promise<boolean> },
  hook: DietHook,
  steps: { published(): void; closeJournal(): Promise<void> },
): Promise<void> {
  if (!(await sameFile(layout.journal, before))) {
    throw new JournalError("JOURNAL_CHANGED", "events.jsonl changed while the diet ran; nothing was published", { path: layout.journal });
  }
  if (!(await lock.stillOurs())) {
    throw new JournalError("LOCK_LOST", "runtime.lock no longer holds our lockId; nothing was published", { path: layout.lock });
  }
  await fsp.rename(layout.dietedJournalTmp, layout.dietedJournal);
  await hook("renamed-zst", 0);
  await fsp.rename(layout.manifestTmp, layout.manifest);
  await fsyncDir(layout.eventsDir);
  steps.published();
  await hook("published", 0);
  await steps.closeJournal();
  await fsp.rm(layout.journal, { force: true });
  await hook("journal-deleted", 0);
  await fsp.rm(layout.sidecar, { force: true });
  await fsyncDir(layout.eventsDir);
  await hook("done", 0);
}
