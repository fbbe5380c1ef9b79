/**
 * The `runtime.lock` protocol (format §2.6): JSON `{pid, lockId, runId, startTime, lastHeartbeat,
 * port?}` written via tmp + rename, a 30 s heartbeat while the file still holds our lockId, stale
 * after 120 s without heartbeat or when the pid is dead; legacy bare-pid locks understood.
 */
import { randomUUID } from "node:crypto";
import * as fsp from "node:fs/promises";
import { JournalError, LOCK_TMP_PREFIX, joinPath, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { createTemp, fsyncDir, ioError, removeQuietly, writeFileDurable } from "./durable-file.js";
import { statOrUndefined } from "./fs-checks.js";

export const LOCK_HEARTBEAT_MS = 30_000;
export const LOCK_STALE_AFTER_MS = 120_000;

/** The content of a runtime.lock (legacy bare-pid locks carry only `pid`). */
export interface LockInfo {
  pid: number;
  lockId?: string;
  runId?: string;
  startTime?: string;
  lastHeartbeat?: string;
  port?: number;
  /** True for a lock file holding only a pid. */
  legacy?: boolean;
}

/** What `inspectLock` found. */
export interface LockInspection {
  state: "absent" | "live" | "stale" | "invalid";
  info: LockInfo | null;
  /** Why stale/invalid/live, for messages. */
  reason: string;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** Parse lock text: a JSON object, or a legacy bare pid. Returns a reason string when invalid. */
export function parseLock(text: string): LockInfo | string {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) {
    const pid = Number(trimmed);
    return pid > 0 && Number.isSafeInteger(pid) ? { pid, legacy: true } : "bare pid out of range";
  }
  let v: unknown;
  try {
    v = JSON.parse(trimmed);
  } catch {
    return "neither JSON nor a bare pid";
  }
  if (typeof v === "number" && Number.isSafeInteger(v) && v > 0) return { pid: v, legacy: true };
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not a JSON object";
  const o = v as Record<string, unknown>;
  if (typeof o.pid !== "number" || !Number.isSafeInteger(o.pid) || o.pid <= 0) return "pid is not a positive integer";
  const info: LockInfo = { pid: o.pid };
  if (typeof o.lockId === "string") info.lockId = o.lockId;
  if (typeof o.runId === "string") info.runId = o.runId;
  if (typeof o.startTime === "string") info.startTime = o.startTime;
  if (typeof o.lastHeartbeat === "string") info.lastHeartbeat = o.lastHeartbeat;
  if (typeof o.port === "number") info.port = o.port;
  return info;
}

/** Judge a lock: stale when its pid is dead or its heartbeat is older than 120 s. */
export function judgeLock(info: LockInfo, nowMs: number): { state: "live" | "stale"; reason: string } {
  if (!pidAlive(info.pid)) return { state: "stale", reason: `pid ${info.pid} is not running` };
  const beat = info.lastHeartbeat ?? info.startTime;
  if (beat !== undefined) {
    const t = Date.parse(beat);
    if (Number.isFinite(t) && nowMs - t > LOCK_STALE_AFTER_MS) {
      return { state: "stale", reason: `no heartbeat for ${Math.round((nowMs - t) / 1000)} s (pid ${info.pid} is running)` };
    }
  }
  return { state: "live", reason: `held by pid ${info.pid}${info.runId ? ` (run ${info.runId})` : ""}${info.legacy ? " (legacy bare-pid lock)" : ""}` };
}

/**
 * Read and judge `exec`'s runtime.lock. Never modifies anything.
 * @example (await inspectLock("/runs/x")).state // "absent" | "live" | "stale" | "invalid"
 */
export async function inspectLock(exec: ExecRef, now: () => number = Date.now): Promise<LockInspection> {
  const path = resolveExec(exec).lock;
  const st = await statOrUndefined(path);
  if (!st) return { state: "absent", info: null, reason: "no runtime.lock" };
  if (!st.isFile()) return { state: "invalid", info: null, reason: "runtime.lock is not a regular file" };
  let text: string;
  try {
    text = await fsp.readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { state: "absent", info: null, reason: "no runtime.lock" };
    throw ioError(e, path);
  }
  const info = parseLock(text);
  if (typeof info === "string") return { state: "invalid", info: null, reason: info };
  return { ...judgeLock(info, now()), info };
}

/** A held lock. */
export interface LockHandle {
  readonly lockId: string;
  readonly info: LockInfo;
  /** Rewrite lastHeartbeat now (only while the file holds our lockId). Returns false when the lock was lost. */
  heartbeat(): Promise<boolean>;
  /** True while runtime.lock holds our lockId. */
  stillOurs(): Promise<boolean>;
  /** Stop the heartbeat and remove the file if it is still ours. Idempotent. */
  release(): Promise<void>;
}

export interface AcquireOptions {
  runId?: string;
  port?: number;
  now?: () => number;
}

function serializeLock(info: LockInfo): string {
  const o: Record<string, unknown> = {
    pid: info.pid, lockId: info.lockId, runId: info.runId ?? null, startTime: info.startTime, lastHeartbeat: info.lastHeartbeat,
  };
  if (info.port !== undefined) o.port = info.port;
  return JSON.stringify(o);
}

async function writeLockAtomically(l: ExecLayout, info: LockInfo): Promise<void> {
  // A tmp name unique to this lockId so two claimants never write the same temp file.
  // fsync before rename (always, whatever the journal's policy): a crash must never leave an empty
  // lock (offline tools would refuse it forever).
  await writeFileDurable(l.lock, serializeLock(info), { tmp: l.lockTmpFor(info.lockId as string), durability: "every" });
}

/**
 * Remove `runtime.lock.tmp-<lockId>` files left by a claimant killed between its write and its
 * rename (they were never swept, and each heartbeat of a killed runtime could leave one). Only
 * regular files untouched for LOCK_STALE_AFTER_MS and not ours: writing and renaming a temp takes
 * milliseconds, so an older one belongs to nobody, and a racing claimant's fresh temp is never
 * pulled from under its rename. Best effort: a failure here never fails the claim.
 *
 * @returns the names removed.
 */
export async function sweepStaleLockTemps(exec: ExecRef, ownLockId: string): Promise<string[]> {
  const l = resolveExec(exec);
  const own = l.lockTmpFor(ownLockId);
  const removed: string[] = [];
  let names: string[];
  try {
    names = await fsp.readdir(l.hankweave);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(LOCK_TMP_PREFIX)) continue;
    const path = joinPath(l.hankweave, name);
    if (path === own) continue;
    try {
      const st = await fsp.lstat(path);
      // The wall clock, not an injected one: mtimes are the file system's.
      if (!st.isFile() || Date.now() - st.mtimeMs < LOCK_STALE_AFTER_MS) continue;
      await fsp.rm(path);
      removed.push(name);
    } catch {
      // gone already, or not ours to remove: leave it
    }
  }
  return removed;
}

function heldError(l: ExecLayout, insp: LockInspection): JournalError {
  if (insp.state === "invalid") {
    return new JournalError("LOCK_INVALID", `runtime.lock cannot be judged: ${insp.reason}`, { path: l.lock }, {
      hint: "inspect the file; remove it only if no runtime uses this directory",
    });
  }
  return new JournalError("LOCK_HELD", `runtime.lock is ${insp.reason}`, { path: l.lock, actual: insp.info }, {
    hint: "stop the runtime using this directory (or wait 120 s after it died), then retry",
  });
}

function makeHandle(l: ExecLayout, info: LockInfo, now: () => number): LockHandle {
  const lockId = info.lockId as string;
  let released = false;
  const stillOurs = async (): Promise<boolean> => {
    const insp = await inspectLock(l, now).catch(() => null);
    return insp?.info?.lockId === lockId;
  };
  const heartbeat = async (): Promise<boolean> => {
    if (released || !(await stillOurs())) return false;
    info.lastHeartbeat = new Date(now()).toISOString();
    await writeLockAtomically(l, info);
    return true;
  };
  const timer = setInterval(() => {
    heartbeat().then((ok) => { if (!ok) clearInterval(timer); }, () => undefined);
  }, LOCK_HEARTBEAT_MS);
  timer.unref();
  return {
    lockId,
    info,
    heartbeat,
    stillOurs,
    release: async () => {
      if (released) return;
      released = true;
      clearInterval(timer);
      if (await stillOurs()) await fsp.rm(l.lock, { force: true });
    },
  };
}

function freshInfo(opts: AcquireOptions, now: () => number): LockInfo {
  const t = new Date(now()).toISOString();
  const info: LockInfo = { pid: process.pid, lockId: randomUUID(), runId: opts.runId, startTime: t, lastHeartbeat: t };
  if (opts.port !== undefined) info.port = opts.port;
  return info;
}

/**
 * Acquire `exec`'s runtime.lock for a runtime: refuses a live lock (LOCK_HELD) or one that cannot
 * be parsed (LOCK_INVALID); replaces an absent or stale one via tmp + rename, then re-reads it to
 * make sure our lockId won. Heartbeats every 30 s (unref'd timer) while the file holds our lockId.
 *
 * @example const lock = await acquireLock("/runs/x", { runId }); try { … } finally { await lock.release(); }
 */
export async function acquireLock(exec: ExecRef, opts: AcquireOptions = {}): Promise<LockHandle> {
  const l = resolveExec(exec);
  const now = opts.now ?? Date.now;
  const insp = await inspectLock(l, now);
  if (insp.state === "live" || insp.state === "invalid") throw heldError(l, insp);
  const info = freshInfo(opts, now);
  await writeLockAtomically(l, info);
  const after = await inspectLock(l, now);
  if (after.info?.lockId !== info.lockId) throw heldError(l, after);
  await sweepStaleLockTemps(l, info.lockId as string);
  return makeHandle(l, info, now);
}

/**
 * Create runtime.lock only if it is absent, and never as an empty or partial file: the lock is
 * written and fsynced under its temp name, then link()ed into place (EEXIST: someone holds a lock,
 * false), then the temp is removed. A SIGKILL at any point leaves either no lock (and at most a
 * temp that `sweepStaleLockTemps` removes later) or a complete one. The old create-then-write
 * (O_EXCL) left an empty runtime.lock when killed between the two, and every later offline tool
 * refused it (LOCK_INVALID). Where hard links are unsupported it falls back to O_EXCL + write.
 *
 * @returns true when our lock is in place, false when one already existed.
 */
async function createLockByLink(l: ExecLayout, info: LockInfo): Promise<boolean> {
  const tmp = l.lockTmpFor(info.lockId as string);
  const text = serializeLock(info);
  const fh = await createTemp(tmp);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await removeQuietly(tmp);
    throw ioError(e, tmp);
  }
  await fh.close();
  try {
    await fsp.link(tmp, l.lock);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code === "EEXIST") return false;
    if (!LINK_UNSUPPORTED.includes(code)) throw ioError(e, l.lock);
    return await createLockExclusive(l, text);
  } finally {
    await removeQuietly(tmp);
  }
  await fsyncDir(l.hankweave);
  return true;
}

/** link(2) errors of file systems without hard links, where the claim falls back to O_EXCL. */
const LINK_UNSUPPORTED = ["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV"];

/** The fallback of `createLockByLink` on file systems without hard links: O_EXCL, write, fsync. */
async function createLockExclusive(l: ExecLayout, text: string): Promise<boolean> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(l.lock, "wx");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw ioError(e, l.lock);
  }
  try {
    await fh.writeFile(text);
    await fh.sync();
  } catch (e) {
    // We created it: an empty or partial lock left by a full disk would block every offline tool.
    await removeQuietly(l.lock);
    throw ioError(e, l.lock);
  } finally {
    await fh.close();
  }
  await fsyncDir(l.hankweave);
  return true;
}

/**
 * Claim the lock for an offline tool that modifies a journal (diet, repair): create-if-absent
 * (written under a temp name, then link()ed: never an empty lock), replace only a provably stale lock, refuse anything else (LOCK_HELD / LOCK_INVALID).
 */
export async function claimLockForOfflineTool(exec: ExecRef, opts: AcquireOptions = {}): Promise<LockHandle> {
  const now = opts.now ?? Date.now;
  const l = resolveExec(exec);
  const info = freshInfo(opts, now);
  if (await createLockByLink(l, info)) {
    await sweepStaleLockTemps(l, info.lockId as string);
    return makeHandle(l, info, now);
  }
  const insp = await inspectLock(l, now);
  if (insp.state !== "stale" && insp.state !== "absent") throw heldError(l, insp);
  await writeLockAtomically(l, info);
  const after = await inspectLock(l, now);
  if (after.info?.lockId !== info.lockId) throw heldError(l, after);
  await sweepStaleLockTemps(l, info.lockId as string);
  return makeHandle(l, info, now);
}
