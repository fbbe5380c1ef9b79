import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, utimesSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { acquireLock, claimLockForOfflineTool, inspectLock, LOCK_STALE_AFTER_MS, sweepStaleLockTemps } from "./lock.js";

const dirs: string[] = [];
function freshExec(): string {
  const d = mkdtempSync(`${tmpdir()}/hwj-lock-`);
  mkdirSync(layoutOf(d).hankweave, { recursive: true });
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A pid that is certainly not running: a child that has exited and been reaped. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
}

const lockJson = (o: Record<string, unknown>) => JSON.stringify({ lockId: "other", runId: "r", ...o });

describe("runtime.lock", () => {
  it("acquire writes pid, lockId, runId, startTime, lastHeartbeat, port; release removes only our lock", async () => {
    const exec = freshExec();
    const lock = await acquireLock(exec, { runId: "run-1", port: 7777 });
    const info = JSON.parse(readFileSync(layoutOf(exec).lock, "utf8"));
    expect(Object.keys(info)).toEqual(["pid", "lockId", "runId", "startTime", "lastHeartbeat", "port"]);
    expect(info).toMatchObject({ pid: process.pid, lockId: lock.lockId, runId: "run-1", port: 7777 });
    expect((await inspectLock(exec)).state).toBe("live");
    await expect(acquireLock(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
    await lock.release();
    expect(existsSync(layoutOf(exec).lock)).toBe(false);
  });

  it("heartbeats only while the file holds our lockId, and release leaves a foreign lock alone", async () => {
    let t = Date.parse("2026-01-01T00:00:00.000Z");
    const exec = freshExec();
    const lock = await acquireLock(exec, { now: () => t });
    t += 30_000;
    expect(await lock.heartbeat()).toBe(true);
    expect(JSON.parse(readFileSync(layoutOf(exec).lock, "utf8")).lastHeartbeat).toBe("2026-01-01T00:00:30.000Z");
    const foreign = lockJson({ pid: process.pid, startTime: "x", lastHeartbeat: new Date().toISOString() });
    writeFileSync(layoutOf(exec).lock, foreign);
    expect(await lock.heartbeat()).toBe(false);
    await lock.release();
    expect(readFileSync(layoutOf(exec).lock, "utf8")).toBe(foreign);
  });

  it("is stale when the pid is dead (ESRCH) or the heartbeat is older than 120 s", async () => {
    const exec = freshExec();
    writeFileSync(layoutOf(exec).lock, lockJson({ pid: deadPid(), lastHeartbeat: new Date().toISOString() }));
    expect(await inspectLock(exec)).toMatchObject({ state: "stale" });
    writeFileSync(layoutOf(exec).lock, lockJson({ pid: process.pid, lastHeartbeat: new Date(Date.now() - LOCK_STALE_AFTER_MS - 1000).toISOString() }));
    expect(await inspectLock(exec)).toMatchObject({ state: "stale" });
    writeFileSync(layoutOf(exec).lock, lockJson({ pid: process.pid, lastHeartbeat: new Date(Date.now() - 60_000).toISOString() }));
    expect(await inspectLock(exec)).toMatchObject({ state: "live" });
  });

  it("understands legacy bare-pid locks", async () => {
    const exec = freshExec();
    writeFileSync(layoutOf(exec).lock, `${process.pid}\n`);
    expect(await inspectLock(exec)).toMatchObject({ state: "live", info: { pid: process.pid, legacy: true } });
    writeFileSync(layoutOf(exec).lock, String(deadPid()));
    expect(await inspectLock(exec)).toMatchObject({ state: "stale", info: { legacy: true } });
  });

  it("reports an unparseable lock as invalid and offline tools refuse it (LOCK_INVALID)", async () => {
    const exec = freshExec();
    writeFileSync(layoutOf(exec).lock, "{garbage");
    expect((await inspectLock(exec)).state).toBe("invalid");
    await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_INVALID" });
    expect(readFileSync(layoutOf(exec).lock, "utf8")).toBe("{garbage");
  });

  it("offline claim: creates if absent, refuses a live lock held by another process, replaces a stale one", async () => {
    const exec = freshExec();
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      const held = lockJson({ pid: sleeper.pid, startTime: new Date().toISOString(), lastHeartbeat: new Date().toISOString() });
      writeFileSync(layoutOf(exec).lock, held);
      await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
      expect(readFileSync(layoutOf(exec).lock, "utf8")).toBe(held);
    } finally {
      sleeper.kill("SIGKILL");
    }
    await new Promise((r) => sleeper.once("exit", r));
    const claimed = await claimLockForOfflineTool(exec);
    expect(JSON.parse(readFileSync(layoutOf(exec).lock, "utf8")).lockId).toBe(claimed.lockId);
    await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
    await claimed.release();
    const again = await claimLockForOfflineTool(exec);
    await again.release();
    expect(existsSync(layoutOf(exec).lock)).toBe(false);
  });

  it("an offline claim never shows an empty lock: it is written under a temp name and linked into place, no temp left", async () => {
    const exec = freshExec();
    const l = layoutOf(exec);
    // A temp left by a claimant killed before its link() neither blocks the claim nor becomes the lock.
    writeFileSync(`${l.lock}.tmp-killed-claimant`, "");
    const claimed = await claimLockForOfflineTool(exec);
    const text = readFileSync(l.lock, "utf8");
    expect(JSON.parse(text).lockId).toBe(claimed.lockId);
    expect(readdirSync(l.hankweave).filter((n) => n.startsWith("runtime.lock.tmp-") && n !== "runtime.lock.tmp-killed-claimant")).toEqual([]);
    // A second claimant loses at link() (EEXIST): the held lock is byte-identical and its temp is gone.
    await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
    expect(readFileSync(l.lock, "utf8")).toBe(text);
    expect(readdirSync(l.hankweave).filter((n) => n.startsWith("runtime.lock.tmp-") && n !== "runtime.lock.tmp-killed-claimant")).toEqual([]);
    await claimed.release();
  });

  it("a claim sweeps lock temps abandoned for over 120 s, never a fresh one, a directory or its own", async () => {
    for (const claim of [acquireLock, claimLockForOfflineTool]) {
      const exec = freshExec();
      const l = layoutOf(exec);
      const old = (Date.now() - LOCK_STALE_AFTER_MS - 60_000) / 1000;
      writeFileSync(l.lockTmpFor("dead-1"), "{");
      utimesSync(l.lockTmpFor("dead-1"), old, old);
      writeFileSync(l.lockTmpFor("racing"), "{");
      mkdirSync(l.lockTmpFor("a-directory"));
      utimesSync(l.lockTmpFor("a-directory"), old, old);
      writeFileSync(`${l.hankweave}/runtime.lock.tmpx-not-a-temp`, "x");
      utimesSync(`${l.hankweave}/runtime.lock.tmpx-not-a-temp`, old, old);
      const lock = await claim(exec);
      const names = readdirSync(l.hankweave).sort();
      expect(names).toEqual(["runtime.lock", "runtime.lock.tmp-a-directory", "runtime.lock.tmp-racing", "runtime.lock.tmpx-not-a-temp"]);
      // Our own temp is never swept, however old (a heartbeat may be writing it).
      writeFileSync(l.lockTmpFor(lock.lockId), "{");
      utimesSync(l.lockTmpFor(lock.lockId), old, old);
      expect(await sweepStaleLockTemps(exec, lock.lockId)).toEqual([]);
      await lock.release();
    }
  });
});
