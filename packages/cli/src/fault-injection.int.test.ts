/**
 * Fault injection beyond SIGKILL (issue 14 class 3): every command that writes runs against a full
 * disk (a small tmpfs filled to ENOSPC: bytes, and inodes via `nr_inodes=`), a read-only bind mount
 * (EROFS) and a directory where its temp file (or target) goes (EISDIR). Each case asserts: exit 1
 * with one stable code (NO_SPACE / READ_ONLY / NOT_A_REGULAR_FILE), no stack trace and no
 * "internal error", every file of the case directory byte-identical afterwards (the original
 * intact, nothing published) and no temp left behind.
 *
 * Needs root (mount); as another user, or where `mount` is refused, the tests say so and skip.
 * Mounts are made in a temp dir and always unmounted (afterAll).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { runCli } from "./main.js";
import { memoryIO } from "./io.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.resolve(HERE, "../../../fixtures/diet/ok-finished-run");
const BASE = fs.mkdtempSync(path.join(os.tmpdir(), "hwj-faults-"));
const mounts: string[] = [];
let unavailable: string | null = null;

function mount(args: string[]): void {
  execFileSync("mount", args, { stdio: "pipe" });
  mounts.push(args[args.length - 1] as string);
}

beforeAll(() => {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) {
    unavailable = "not running as root (mount needs it)";
    return;
  }
  try {
    for (const d of ["bytes", "inodes", "ro-src", "ro", "plain"]) fs.mkdirSync(path.join(BASE, d));
    mount(["-t", "tmpfs", "-o", "size=4m", "tmpfs", path.join(BASE, "bytes")]);
    mount(["-t", "tmpfs", "-o", "size=16m,nr_inodes=200", "tmpfs", path.join(BASE, "inodes")]);
    mount(["--bind", path.join(BASE, "ro-src"), path.join(BASE, "ro")]);
    execFileSync("mount", ["-o", "remount,ro,bind", path.join(BASE, "ro")], { stdio: "pipe" });
  } catch (e) {
    unavailable = `mount was refused (${String((e as Error).message).split("\n")[0]})`;
  }
});

afterAll(() => {
  for (const m of mounts.reverse()) {
    try {
      execFileSync("umount", [m], { stdio: "pipe" });
    } catch {
      execFileSync("umount", ["-l", m], { stdio: "pipe" });
    }
  }
  fs.rmSync(BASE, { recursive: true, force: true });
});

type Fault = "bytes" | "inodes" | "ro" | "dir";
const EXPECTED: Record<Fault, string> = { bytes: "NO_SPACE", inodes: "NO_SPACE", ro: "READ_ONLY", dir: "NOT_A_REGULAR_FILE" };

interface Case {
  command: string;
  /** Make the starting state in `exec` (a copy of the finished-run fixture is already there). */
  prepare?: (exec: string) => Promise<void>;
  argv: (exec: string, out: string) => string[];
  /** The path where a directory is planted for the EISDIR fault. */
  dirAt: (exec: string, out: string) => string;
}

const TORN = '{"id":"torn","timestamp":"2026-01-01T00:00:00.000Z","type":"info","data":{"cut';

const CASES: Case[] = [
  { command: "diet", argv: (e) => ["diet", e], dirAt: (e) => layoutOf(e).dietedJournalTmp },
  {
    command: "restore",
    prepare: async (e) => {
      await applyDiet(e, {});
    },
    argv: (e) => ["restore", e],
    dirAt: (e) => layoutOf(e).restoreTmp,
  },
  {
    command: "repair",
    prepare: async (e) => fs.appendFileSync(layoutOf(e).journal, TORN),
    argv: (e) => ["repair", e],
    dirAt: (e) => layoutOf(e).sidecarTmp,
  },
  { command: "index", argv: (e) => ["index", e], dirAt: (e) => layoutOf(e).indexTmp },
  { command: "query", argv: (e) => ["query", e, "select count(*) from events"], dirAt: (e) => layoutOf(e).indexTmp },
  { command: "rebuild --write", argv: (e) => ["rebuild", e, "--write"], dirAt: (e) => layoutOf(e).stateTmp },
  { command: "report", argv: (e, o) => ["report", e, "-o", path.join(o, "report.html")], dirAt: (_e, o) => `${path.join(o, "report.html")}.tmp-${process.pid}` },
  { command: "export", argv: (e, o) => ["export", e, "--format", "trace", "-o", path.join(o, "trace.json")], dirAt: (_e, o) => `${path.join(o, "trace.json")}.tmp-${process.pid}` },
];

/** Every entry under `dir`: type and, for files, size + SHA-256. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const rel = path.relative(dir, p);
      if (e.isDirectory()) {
        out[rel] = "dir";
        walk(p);
      } else if (e.isFile()) {
        const b = fs.readFileSync(p);
        out[rel] = `file ${b.length} ${createHash("sha256").update(b).digest("hex")}`;
      } else out[rel] = "other";
    }
  };
  walk(dir);
  return out;
}

/** Fill the file system holding `dir` to ENOSPC: with bytes (one file) or with inodes (empty files). */
function fill(dir: string, kind: "bytes" | "inodes"): void {
  const fillDir = path.join(dir, "..", `fill-${kind}`);
  fs.mkdirSync(fillDir, { recursive: true });
  if (kind === "bytes") {
    const fd = fs.openSync(path.join(fillDir, "f"), "w");
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) fs.writeSync(fd, chunk);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
    }
    // Small writes may still fit in the last partial page: fill it byte by byte.
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(512, 1));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
    }
    fs.closeSync(fd);
  } else {
    try {
      for (let i = 0; ; i++) fs.closeSync(fs.openSync(path.join(fillDir, `i${i}`), "w"));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
    }
  }
}

function unfill(dir: string, kind: "bytes" | "inodes"): void {
  fs.rmSync(path.join(dir, "..", `fill-${kind}`), { recursive: true, force: true });
}

const survived: Record<string, number> = {};
let casesRun = 0;

async function runCase(c: Case, fault: Fault): Promise<void> {
  const id = `${c.command.replace(/\W+/g, "-")}-${fault}`;
  // Where the case is prepared (writable) and where the command runs (the faulty view).
  const prepRoot = fault === "ro" ? path.join(BASE, "ro-src") : fault === "dir" ? path.join(BASE, "plain") : path.join(BASE, fault);
  const runRoot = fault === "ro" ? path.join(BASE, "ro") : prepRoot;
  const caseDir = path.join(prepRoot, id);
  const exec = path.join(caseDir, "exec");
  const out = path.join(caseDir, "out");
  fs.mkdirSync(out, { recursive: true });
  fs.cpSync(FIXTURE, exec, { recursive: true });
  await c.prepare?.(exec);
  const runExec = path.join(runRoot, id, "exec");
  const runOut = path.join(runRoot, id, "out");
  if (fault === "dir") fs.mkdirSync(c.dirAt(exec, out), { recursive: true });
  if (fault === "bytes" || fault === "inodes") fill(caseDir, fault);
  try {
    const before = snapshot(caseDir);
    const io = memoryIO({ cwd: caseDir });
    const code = await runCli(c.argv(runExec, runOut), io);
    const err = io.err();
    expect.soft(err, `${id}: a stack trace`).not.toMatch(/internal error|\n\s+at /);
    expect.soft(code, `${id}: exit code (stderr: ${err})`).toBe(1);
    expect.soft(err, `${id}: the code`).toMatch(new RegExp(`^error ${EXPECTED[fault]}: `, "m"));
    const after = snapshot(caseDir);
    const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]);
    expect.soft(changed.map((k) => `${k}: ${before[k] ?? "absent"} → ${after[k] ?? "absent"}`), `${id}: the directory changed (stderr: ${err})`).toEqual([]);
    survived[c.command] = (survived[c.command] ?? 0) + 1;
    casesRun += 1;
  } finally {
    if (fault === "bytes" || fault === "inodes") unfill(caseDir, fault);
    fs.rmSync(caseDir, { recursive: true, force: true });
  }
}

describe("fault injection: full disks, read-only mounts, directories where files go", () => {
  for (const fault of ["bytes", "inodes", "ro", "dir"] as const) {
    it(`every writing command ends ${EXPECTED[fault]} (${fault}) with the directory as it found it`, async (ctx) => {
      if (unavailable) {
        console.info(`fault injection: ${unavailable}: these tests cannot run`);
        ctx.skip();
        return;
      }
      for (const c of CASES) await runCase(c, fault);
    }, 60_000);
  }

  it("diet with events.meta.json a directory refuses up front (NOT_A_REGULAR_FILE): nothing published, events.jsonl kept", async (ctx) => {
    if (unavailable) {
      ctx.skip();
      return;
    }
    await runCase({ command: "diet (events.meta.json a directory)", argv: (e) => ["diet", e], dirAt: (e) => layoutOf(e).sidecar }, "dir");
  });

  it("the extended diet with events.meta.json a directory refuses up front too (NOT_A_REGULAR_FILE)", async (ctx) => {
    if (unavailable) {
      ctx.skip();
      return;
    }
    await runCase({ command: "diet --bodies extended (events.meta.json a directory)", argv: (e) => ["diet", e, "--bodies", "extended"], dirAt: (e) => layoutOf(e).sidecar }, "dir");
  });

  it("counts the faults survived per command", (ctx) => {
    if (unavailable) {
      ctx.skip();
      return;
    }
    console.info(`fault injection (as root): ${casesRun} faults survived, per command ${JSON.stringify(survived)}, 0 bytes lost`);
    for (const c of CASES) expect(survived[c.command]).toBe(4);
  });
});
