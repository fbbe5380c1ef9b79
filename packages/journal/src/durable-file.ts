/**
 * The one durable-file module of hankweave-journal: the durability policy, OS-error wrapping into
 * stable codes, no-follow opens, directory fsync, and temp + write + fsync + rename + fsync-dir.
 * Every package that writes inside `.hankweave/` (journal, state, cas, diet, audit) goes through
 * here. It lives in the journal package because that is the lowest package that may touch
 * `node:fs` (core stays pure) and it depends on core only, so every other package can import it
 * without a cycle (cas → journal → core).
 *
 * Rules (see docs/durability.md):
 * - Writes never follow a symbolic link: temps are created with O_CREAT|O_EXCL|O_NOFOLLOW after a
 *   stale temp (or a planted link at the temp name) is unlinked; final targets and files modified in
 *   place are opened with O_NOFOLLOW (or checked with lstat) and a link is refused (SYMLINK_REFUSED).
 * - A failed directory fsync is a failure of the operation (coded like any write error), except
 *   EINVAL/ENOTSUP/EOPNOTSUPP: the file system cannot sync directories, the rename is atomic and as
 *   durable as that file system allows. A caller that fails there does not go on to destructive
 *   steps (a diet never deletes events.jsonl after a failed fsync of the directory).
 * - A failed write removes its temp; stale temps are swept on open (`sweepTemps`).
 */
import { closeSync, constants as FS, lstatSync, openSync, renameSync, rmSync, unlinkSync, writeSync, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { JournalError, type ErrorCode } from "@hankweave-journal/core";

/** none: no fsync (the reference runtime); batch: one fsync per written batch; every: one write + fsync per event. */
export type Durability = "none" | "batch" | "every";

/**
 * The one default durability of every writer (journal appends, state.json, sidecar, lock, blobs):
 * `every`. A caller that wants the reference runtime's speed asks for `none` explicitly.
 */
export const DEFAULT_DURABILITY: Durability = "every";

/** `d` or the default; a TypeError for anything that is not a policy (programmer misuse). */
export function resolveDurability(d: Durability | undefined): Durability {
  const v = d ?? DEFAULT_DURABILITY;
  if (v !== "none" && v !== "batch" && v !== "every") {
    throw new TypeError(`durability must be none, batch or every, got ${String(v)}`);
  }
  return v;
}

/** True when the policy fsyncs files and directories (every policy but `none`). */
export function syncsUnder(d: Durability | undefined): boolean {
  return resolveDurability(d) !== "none";
}

/** errno → stable code. Unlisted errnos are IO_ERROR. */
const ERRNO_CODES: Record<string, ErrorCode> = {
  ENOSPC: "NO_SPACE",
  EDQUOT: "NO_SPACE",
  EROFS: "READ_ONLY",
  ELOOP: "SYMLINK_REFUSED",
  EISDIR: "NOT_A_REGULAR_FILE",
  EACCES: "PERMISSION_DENIED",
  EPERM: "PERMISSION_DENIED",
  // Node's own code for fs.rm / fs.cp of a directory without `recursive`.
  ERR_FS_EISDIR: "NOT_A_REGULAR_FILE",
  // better-sqlite3's codes (the index is a SQLite database).
  SQLITE_FULL: "NO_SPACE",
  SQLITE_READONLY: "READ_ONLY",
};

const ERRNO_HINTS: Partial<Record<ErrorCode, string>> = {
  NO_SPACE: "free space or inodes on that file system, then run the command again",
  READ_ONLY: "the file system is mounted read-only; copy the execution to a writable place or remount",
  SYMLINK_REFUSED: "replace the symbolic link inside .hankweave/ by a regular file (writes never follow links)",
  PERMISSION_DENIED: "check the owner and mode of the file and its directory",
};

/** The errno of an OS error (also of one that crossed a worker boundary as a plain object), or undefined. */
export function errnoOf(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  if (typeof c !== "string") return undefined;
  if (/^E[A-Z0-9]+$/.test(c) || c === "ERR_FS_EISDIR") return c;
  // SQLITE_READONLY_DBMOVED and friends: the primary code.
  const sqlite = /^SQLITE_[A-Z]+/.exec(c);
  return sqlite ? sqlite[0] : undefined;
}

/**
 * Wrap an OS error on `path` as a JournalError with a stable code: NO_SPACE (ENOSPC, EDQUOT),
 * READ_ONLY (EROFS), SYMLINK_REFUSED (ELOOP of a no-follow open), NOT_A_REGULAR_FILE (EISDIR),
 * PERMISSION_DENIED (EACCES, EPERM), else IO_ERROR. JournalErrors pass through unchanged.
 * @example throw ioError(e, layout.state) // code NO_SPACE when the disk is full
 */
export function ioError(e: unknown, path: string): JournalError {
  if (e instanceof JournalError) return e;
  const errno = errnoOf(e);
  const code = (errno && ERRNO_CODES[errno]) || "IO_ERROR";
  const msg = (e as { message?: unknown } | null)?.message;
  const hint = ERRNO_HINTS[code];
  return new JournalError(code, `${errno ?? "error"} on ${path}: ${typeof msg === "string" ? msg : String(e)}`, {
    path,
    errno,
  }, hint === undefined ? { cause: e } : { cause: e, hint });
}

/**
 * The coded error of a worker thread's failure: a JournalError passes, an error carrying an errno
 * (or SQLite) code is `ioError`'s, anything else (the thread died, an uncoded throw) is
 * WORKER_FAILED with the message. The user never sees "internal error" for a worker.
 */
export function workerError(e: unknown, path: string): JournalError {
  if (e instanceof JournalError) return e;
  if (errnoOf(e) !== undefined) return ioError(e, path);
  const msg = (e as { message?: unknown } | null)?.message;
  return new JournalError("WORKER_FAILED", `a worker failed on ${path}: ${typeof msg === "string" ? msg : String(e)}`, { path }, { cause: e });
}

/** `lstat` (never follows a link), or undefined when the path does not exist. */
export async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await fsp.lstat(p);
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw ioError(e, p);
  }
}

/** The NOT_A_REGULAR_FILE (or SYMLINK_REFUSED) error for `p` whose lstat/stat is `st`. */
export function notRegular(p: string, st: Stats): JournalError {
  if (st.isSymbolicLink()) {
    return new JournalError("SYMLINK_REFUSED", `${p} is a symbolic link; writes never follow links`, {
      path: p, actual: "symbolic link", expected: "regular file",
    }, { hint: ERRNO_HINTS.SYMLINK_REFUSED as string });
  }
  const kind = st.isDirectory() ? "directory" : st.isFIFO() ? "FIFO" : st.isSocket() ? "socket" : "special file";
  return new JournalError("NOT_A_REGULAR_FILE", `${p} is a ${kind}, not a regular file`, {
    path: p,
    actual: kind,
    expected: "regular file",
  });
}

/**
 * Throw unless `p` is absent or a regular file, judged by lstat: a symbolic link is refused with
 * SYMLINK_REFUSED, a directory/FIFO/socket/device with NOT_A_REGULAR_FILE. Returns the lstat
 * (undefined when absent). The check for a write target; readers that follow links use fs-checks.
 */
export async function assertRegularFile(p: string): Promise<Stats | undefined> {
  const st = await lstatOrUndefined(p);
  if (st !== undefined && !st.isFile()) throw notRegular(p, st);
  return st;
}

/**
 * Open `p` with `flags` plus O_NOFOLLOW (and O_NONBLOCK so a FIFO never blocks the open), then
 * check the descriptor is a regular file. A link at `p` is SYMLINK_REFUSED; other errors coded by
 * `ioError`. For files modified in place (journal truncation and appends, quarantine files).
 */
export async function openNoFollow(p: string, flags: number, mode = 0o644): Promise<FileHandle> {
  let fh: FileHandle;
  try {
    fh = await fsp.open(p, flags | FS.O_NOFOLLOW | FS.O_NONBLOCK, mode);
  } catch (e) {
    if (errnoOf(e) === "ELOOP") {
      const st = await lstatOrUndefined(p);
      if (st) throw notRegular(p, st);
    }
    throw ioError(e, p);
  }
  const st = await fh.stat();
  if (!st.isFile()) {
    await fh.close();
    throw notRegular(p, st);
  }
  return fh;
}

/**
 * Create the temp file `tmp` exclusively (O_CREAT|O_EXCL|O_NOFOLLOW): whatever sat at that name (a
 * stale temp, a planted symbolic link) is unlinked first, never written through. A directory at the
 * temp name is NOT_A_REGULAR_FILE (it is not ours to delete).
 */
export async function createTemp(tmp: string, mode = 0o644): Promise<FileHandle> {
  const st = await lstatOrUndefined(tmp);
  if (st?.isDirectory()) throw notRegular(tmp, st);
  if (st) await fsp.unlink(tmp).catch((e) => { if (errnoOf(e) !== "ENOENT") throw ioError(e, tmp); });
  try {
    return await fsp.open(tmp, FS.O_CREAT | FS.O_EXCL | FS.O_WRONLY | FS.O_NOFOLLOW, mode);
  } catch (e) {
    throw ioError(e, tmp);
  }
}

/**
 * Pre-check before a multi-step operation starts changing anything: throw NOT_A_REGULAR_FILE when
 * a directory sits at the temp name `tmp` (createTemp would refuse it half-way through).
 */
export async function assertTempUsable(tmp: string): Promise<void> {
  const st = await lstatOrUndefined(tmp);
  if (st?.isDirectory()) throw notRegular(tmp, st);
}

/** Directory fsync errnos that mean "this file system cannot sync directories" (tolerated, see the module rule). */
const DIR_SYNC_UNSUPPORTED = new Set(["EINVAL", "ENOTSUP", "EOPNOTSUPP"]);

/**
 * fsync directory `dir` so a create, rename or unlink inside it is durable. The one rule: any
 * failure is a coded error (NO_SPACE, READ_ONLY, IO_ERROR, …) except a file system that cannot
 * sync directories (EINVAL/ENOTSUP/EOPNOTSUPP), which is tolerated.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await fsp.open(dir, FS.O_RDONLY | FS.O_DIRECTORY);
    await fh.sync();
  } catch (e) {
    const code = errnoOf(e);
    if (code === undefined || !DIR_SYNC_UNSUPPORTED.has(code)) throw ioError(e, dir);
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** fsync the regular file `p` (opened without following a link). */
export async function fsyncFile(p: string): Promise<void> {
  const fh = await openNoFollow(p, FS.O_RDONLY);
  try {
    await fh.sync();
  } catch (e) {
    throw ioError(e, p);
  } finally {
    await fh.close();
  }
}

/** Remove `p` if present; errors are ignored (cleanup after a failure must not mask the failure). */
export async function removeQuietly(p: string): Promise<void> {
  await fsp.rm(p, { force: true }).catch(() => undefined);
}

/**
 * Rename `tmp` over `final` and fsync their directory (unless `durability` is none). `final` may
 * be absent or a regular file (a symbolic link is replaced, never followed, by rename(2)); a
 * directory there is NOT_A_REGULAR_FILE. The temp is removed on failure.
 */
export async function publishTemp(tmp: string, final: string, opts: { durability?: Durability } = {}): Promise<void> {
  try {
    const st = await lstatOrUndefined(final);
    if (st?.isDirectory()) throw notRegular(final, st);
    await fsp.rename(tmp, final);
  } catch (e) {
    await removeQuietly(tmp);
    throw ioError(e, final);
  }
  if (syncsUnder(opts.durability)) await fsyncDir(path.dirname(final));
}

/** Options of `writeFileDurable`. */
export interface DurableWriteOptions {
  /** The temp path (from the layout); it must be in the same directory as the final path. */
  tmp: string;
  /** `none` skips both fsyncs, never the temp + rename. Default DEFAULT_DURABILITY. */
  durability?: Durability;
  mode?: number;
}

/**
 * Atomically replace (or create) `final` with `data`: create the temp exclusively and without
 * following links, write, fsync, rename, fsync the directory. Guarantees: `final` is the old or the
 * new complete file after any crash; no temp is left after a failure; every OS error is coded.
 * Does not: protect against a concurrent writer of the same temp name (callers hold the lock).
 * @example await writeFileDurable(l.sidecar, bytes, { tmp: l.sidecarTmp });
 */
export async function writeFileDurable(final: string, data: Uint8Array | string, opts: DurableWriteOptions): Promise<void> {
  const sync = syncsUnder(opts.durability);
  try {
    const fh = await createTemp(opts.tmp, opts.mode);
    try {
      await fh.writeFile(data);
      if (sync) await fh.sync();
    } finally {
      await fh.close();
    }
  } catch (e) {
    await removeQuietly(opts.tmp);
    throw ioError(e, final);
  }
  await publishTemp(opts.tmp, final, opts.durability === undefined ? {} : { durability: opts.durability });
}

/**
 * `writeFileDurable` with `durability: "none"`, in the calling thread: create the temp exclusively
 * without following links (a stale temp or a planted link is unlinked first, a directory there is
 * NOT_A_REGULAR_FILE), write, close, rename over `final` (a directory there is NOT_A_REGULAR_FILE).
 * No fsync: the caller MUST make the file and its directory durable before anything references it
 * (the diet's CAS blobs: `syncBlobs`). For small files on a cached file system, where each async
 * call is a threadpool round trip (a context switch on a busy machine) that costs more than the
 * call itself. Same guarantees otherwise: no temp left after a failure, every OS error coded.
 * @example writeFileNoSyncSync(l.casBlob(sha), frame, { tmp: l.casBlobTmp(sha, "x1") });
 */
export function writeFileNoSyncSync(final: string, data: Uint8Array, opts: { tmp: string; mode?: number }): void {
  const tmp = opts.tmp;
  let created = false;
  try {
    const st = lstatSync(tmp, { throwIfNoEntry: false });
    if (st?.isDirectory()) throw notRegular(tmp, st);
    if (st) unlinkSync(tmp);
    const fd = openSync(tmp, FS.O_CREAT | FS.O_EXCL | FS.O_WRONLY | FS.O_NOFOLLOW, opts.mode ?? 0o644);
    created = true;
    try {
      for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at);
    } finally {
      closeSync(fd);
    }
    const fst = lstatSync(final, { throwIfNoEntry: false });
    if (fst?.isDirectory()) throw notRegular(final, fst);
    renameSync(tmp, final);
  } catch (e) {
    if (created) {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // cleanup after a failure must not mask the failure
      }
    }
    if (e instanceof JournalError) throw e;
    throw ioError(e, final);
  }
}

/**
 * Copy regular file `src` to `dst` without following a link at either end: `src` is opened with
 * O_NOFOLLOW, `dst` (absent, or a regular file) is replaced through a fresh exclusive create. Used for
 * `state.json` → `state.json.bak`. Returns false when `src` does not exist. A link or non-regular
 * file at `dst` is refused (SYMLINK_REFUSED / NOT_A_REGULAR_FILE), never written through.
 */
export async function copyFileNoFollow(src: string, dst: string, opts: { durability?: Durability } = {}): Promise<boolean> {
  let data: Buffer;
  try {
    const fh = await openNoFollow(src, FS.O_RDONLY);
    try {
      data = await fh.readFile();
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (errnoOf(e) === "ENOENT" || errnoOf((e as { cause?: unknown }).cause) === "ENOENT") return false;
    throw ioError(e, src);
  }
  await assertRegularFile(dst);
  await fsp.unlink(dst).catch((e) => { if (errnoOf(e) !== "ENOENT") throw ioError(e, dst); });
  try {
    const out = await createTemp(dst);
    try {
      await out.writeFile(data);
      if (syncsUnder(opts.durability)) await out.sync();
    } finally {
      await out.close();
    }
  } catch (e) {
    await removeQuietly(dst);
    throw ioError(e, dst);
  }
  return true;
}

/**
 * Remove the stale temps in `dir` whose names `isTemp` accepts (a crash between a temp's write and
 * its rename leaves one; they are never trusted). Links and files are unlinked, never followed;
 * directories are left alone. Returns the names removed. A missing `dir` sweeps nothing.
 */
export async function sweepTemps(dir: string, isTemp: (name: string) => boolean): Promise<string[]> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw ioError(e, dir);
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!isTemp(name)) continue;
    const p = path.join(dir, name);
    const st = await lstatOrUndefined(p);
    if (!st || st.isDirectory()) continue;
    try {
      await fsp.unlink(p);
      removed.push(name);
    } catch (e) {
      if (errnoOf(e) !== "ENOENT") throw ioError(e, p);
    }
  }
  return removed;
}
