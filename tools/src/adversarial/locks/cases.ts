/**
 * Live and stale runtime.lock (family `locks`): a live owner (this process's pid, fresh heartbeat)
 * makes every writing command refuse with LOCK_HELD and change nothing; a stale one (a dead pid,
 * an old heartbeat) is taken over; an unparseable one is LOCK_INVALID.
 */
import * as fs from "node:fs";
import { layoutOf } from "@hankweave-journal/core";
import type { AdversarialCase } from "../harness.js";
import { finishedExec, finishedLines, joinLines, execWithJournal } from "../executions.js";

const live = (): string => JSON.stringify({ pid: process.pid, lockId: "live-lock", lastHeartbeat: new Date().toISOString() });
const stale = (): string => JSON.stringify({ pid: 2 ** 22 + 12345, lockId: "stale-lock", lastHeartbeat: "2020-01-01T00:00:00.000Z" });

function torn(root: string): string {
  const b = joinLines(finishedLines());
  return execWithJournal(root, b.subarray(0, b.length - 30));
}

export function lockCases(): AdversarialCase[] {
  const out: AdversarialCase[] = [];
  const writers: [string, (root: string) => string, (e: string) => string[]][] = [
    ["diet", (r) => finishedExec(r), (e) => ["diet", e]],
    ["repair", torn, (e) => ["repair", e]],
    ["rebuild-write", (r) => finishedExec(r), (e) => ["rebuild", e, "--write"]],
  ];
  for (const [label, make, argv] of writers) {
    out.push({
      name: `locks/live/${label}`, family: "locks", classes: [0], command: argv("x")[0], exit: [1], code: "LOCK_HELD",
      setup: (root) => { const exec = make(root); fs.writeFileSync(layoutOf(exec).lock, live()); return { exec, argv: argv(exec) }; },
    });
    out.push({
      name: `locks/invalid/${label}`, family: "locks", classes: [0], command: argv("x")[0], exit: [1], code: "LOCK_INVALID",
      setup: (root) => { const exec = make(root); fs.writeFileSync(layoutOf(exec).lock, "{garbage"); return { exec, argv: argv(exec) }; },
    });
    out.push({
      name: `locks/stale/${label}`, family: "locks", classes: [0], command: argv("x")[0], exit: [0],
      mayChange: [/^exec\/\.hankweave\//],
      setup: (root) => { const exec = make(root); fs.writeFileSync(layoutOf(exec).lock, stale()); return { exec, argv: argv(exec) }; },
    });
  }
  // Readers never need the lock: a live one changes nothing for them.
  for (const cmd of ["cat", "stats", "audit", "verify"]) {
    out.push({
      name: `locks/live/${cmd}`, family: "locks", classes: [0], command: cmd, exit: [0],
      setup: (root) => { const exec = finishedExec(root); fs.writeFileSync(layoutOf(exec).lock, live()); return { exec, argv: [cmd, exec] }; },
    });
  }
  return out;
}
