/**
 * One `index` build at a time per execution: the build that writes `journal.index.sqlite.tmp`
 * holds `journal.index.sqlite.lock` (created exclusively, its pid inside). A second build waits
 * for it (polling) and then plans again (usually finding the index up to date); a lock whose pid
 * is not alive (a killed build) is taken over. Waiting longer than `waitMs` fails with INDEX_BUSY.
 *
 * Guarantees: two concurrent builds never write the same temp file (the "table meta already
 * exists" crash); the lock is removed when the holder's work settles. Does not guard against a
 * process on another host sharing the directory (pids are local).
 */
import * as fs from "node:fs";
import { JournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { ioError } from "@hankweave-journal/journal";

/** How long a build waits for another build of the same execution. */
export const INDEX_LOCK_WAIT_MS = 10 * 60 * 1000;
const POLL_MS = 50;

function alive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Try to take the lock once: true when taken; false when a live build holds it. */
function tryLock(lock: string): boolean {
  try {
    fs.writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
      // Not EEXIST: the file is ours (created, then the write failed: a full disk) or absent. An
      // empty lock left behind would make the next build wait for it.
      fs.rmSync(lock, { force: true });
      throw e;
    }
  }
  let owner = NaN;
  try {
    owner = Number(fs.readFileSync(lock, "utf8").trim());
  } catch {
    return false; // vanished or unreadable between the two calls: try again on the next poll
  }
  // An empty file is a holder between create and write: give it a poll before judging it.
  if (owner === process.pid || alive(owner) || Number.isNaN(owner)) return false;
  // Stale (killed holder): take it over by renaming our own claim over it.
  const mine = `${lock}.${process.pid}`;
  fs.writeFileSync(mine, String(process.pid));
  fs.renameSync(mine, lock);
  return Number(fs.readFileSync(lock, "utf8").trim()) === process.pid;
}

/**
 * Run `work` holding the index build lock of `exec`. `waited` tells `work` whether another build
 * ran meanwhile (so it re-plans from what that one published).
 */
export async function withIndexLock<T>(exec: ExecRef, work: (waited: boolean) => Promise<T>, waitMs = INDEX_LOCK_WAIT_MS): Promise<T> {
  const layout = resolveExec(exec);
  const lock = layout.indexLock;
  const deadline = Date.now() + waitMs;
  let waited = false;
  let emptySince = 0;
  for (;;) {
    let got: boolean;
    try {
      got = tryLock(lock);
    } catch (e) {
      // No .hankweave/ (or no execution): nothing to lock; the build reports what is missing.
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return work(false);
      throw ioError(e, lock); // NO_SPACE, READ_ONLY, … (durable-file.ts)
    }
    if (got) break;
    // An empty lock file left by a holder killed between create and write is stale after a while.
    try {
      if (fs.statSync(lock).size === 0) {
        emptySince ||= Date.now();
        if (Date.now() - emptySince > 5000) fs.rmSync(lock, { force: true });
      } else emptySince = 0;
    } catch {
      emptySince = 0;
    }
    if (Date.now() > deadline) {
      throw new JournalError("INDEX_BUSY", `another index build of ${layout.exec} holds ${lock}`, { path: lock }, { hint: "wait for it to finish, or remove the lock file if no build is running" });
    }
    waited = true;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  try {
    return await work(waited);
  } finally {
    fs.rmSync(lock, { force: true });
  }
}
