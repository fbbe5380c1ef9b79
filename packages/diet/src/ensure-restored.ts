/**
 * The boot-time "ensure restored" API (format §6): make sure `events.jsonl` exists before a runtime
 * appends, restoring it in place from the dieted pair and then pruning the pair (never the CAS).
 */
import * as fsp from "node:fs/promises";
import { JournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { fsyncDir, lstatOrUndefined } from "@hankweave-journal/cas";
import { inspectLock, journalPresence } from "@hankweave-journal/journal";
import { hashFile, restoreJournal, type RestoreHook } from "./restore.js";
import { readManifest } from "./manifest.js";

/** What `ensureRestored` found or did. */
export interface EnsureRestoredResult {
  exec: string;
  /** `plain`: events.jsonl was there; `restored`: rebuilt and the pair pruned; `none`: no journal at all. */
  status: "plain" | "restored" | "none";
  originalSha256: string | null;
}

async function assertRegularOrAbsent(path: string): Promise<boolean> {
  const st = await lstatOrUndefined(path);
  if (st !== undefined && !st.isFile()) {
    throw new JournalError("NOT_A_REGULAR_FILE", `${path} is not a regular file`, { path });
  }
  return st !== undefined;
}

/**
 * Ensure `exec` has a plain events.jsonl. Refuses: NOT_A_REGULAR_FILE (any journal file that is
 * not a regular file), HALF_PAIR (no events.jsonl and half a pair), RESTORE_CONFLICT (an
 * events.jsonl that does not match the pair beside it), LOCK_HELD (a live lock owner other than
 * `ownLockId`). A leftover half pair beside events.jsonl (a diet that crashed between its two
 * renames) is left alone: events.jsonl is the source of truth.
 *
 * @example await ensureRestored("/runs/x"); // then open the writer
 */
export async function ensureRestored(exec: ExecRef, opts: { ownLockId?: string; hook?: RestoreHook } = {}): Promise<EnsureRestoredResult> {
  const layout = resolveExec(exec);
  const hasJournal = await assertRegularOrAbsent(layout.journal);
  const hasZst = await assertRegularOrAbsent(layout.dietedJournal);
  const hasManifest = await assertRegularOrAbsent(layout.manifest);
  if (hasJournal && !(hasZst && hasManifest)) return { exec: layout.exec, status: "plain", originalSha256: null };
  const presence = await journalPresence(layout);
  if (presence.kind === "none") return { exec: layout.exec, status: "none", originalSha256: null };
  if (presence.kind === "half") {
    throw new JournalError("HALF_PAIR", "no events.jsonl and only half of the dieted pair", { path: layout.eventsDir });
  }
  const lock = await inspectLock(layout);
  if (lock.state === "live" && lock.info?.lockId !== opts.ownLockId) {
    throw new JournalError("LOCK_HELD", `runtime.lock is ${lock.reason}`, { path: layout.lock, actual: lock.info }, {
      hint: "another process owns this execution; stop it before restoring",
    });
  }
  let sha: string;
  if (hasJournal) {
    const manifest = await readManifest(layout);
    const have = await hashFile(layout.journal);
    if (have.sha256 !== manifest.originalSha256 || have.bytes !== manifest.originalBytes) {
      throw new JournalError("RESTORE_CONFLICT", "events.jsonl does not match the dieted pair beside it", {
        path: layout.journal,
        expected: manifest.originalSha256,
        actual: have.sha256,
      });
    }
    sha = have.sha256;
  } else {
    sha = (await restoreJournal(layout, { hook: opts.hook })).originalSha256;
  }
  // Prune the pair (the CAS stays: other diets of this directory may share its bodies).
  await fsp.rm(layout.dietedJournal, { force: true });
  await fsp.rm(layout.manifest, { force: true });
  await fsyncDir(layout.eventsDir);
  return { exec: layout.exec, status: "restored", originalSha256: sha };
}
