/**
 * Bad input: each case gets its own stable code and no byte is lost. Read-only tools leave every
 * file byte-identical; repair keeps every byte either in the journal or in the quarantine file.
 */
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, openSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf, type Finding } from "@hankweave-journal/core";
import { openPlainReader } from "./plain-reader.js";
import { openJournalWriter } from "./writer.js";
import { applyRepair, planRepair } from "./repair.js";
import { claimLockForOfflineTool } from "./lock.js";
import { readSidecarStatus } from "./sidecar.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/journal");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function copyFixture(name: string): string {
  const exec = mkdtempSync(`${tmpdir()}/hwj-bad-${name}-`);
  dirs.push(exec);
  cpSync(path.join(FIXTURES, name), exec, { recursive: true });
  return exec;
}

/** Every file under the exec dir with its bytes (to prove read-only tools change nothing). */
function snapshot(exec: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(exec, p)] = readFileSync(p).toString("base64");
    }
  };
  walk(exec);
  return out;
}

async function readAll(exec: string): Promise<{ events: number; findings: Finding[] }> {
  const r = await openPlainReader(exec);
  const findings: Finding[] = [];
  let events = 0;
  for await (const _ of r.events({ onFinding: (f) => findings.push(f) })) events += 1;
  await r.tail(3);
  await r.close();
  return { events, findings };
}

describe("bad input, each with its own code and no byte lost", () => {
  it("an empty file: no events, no findings, nothing changed", async () => {
    const exec = copyFixture("empty");
    const before = snapshot(exec);
    expect(await readAll(exec)).toEqual({ events: 0, findings: [] });
    expect(snapshot(exec)).toEqual(before);
    const plan = await planRepair(exec);
    expect(plan.tornTail).toBeNull();
  });

  it("a file without a final newline: TORN_TAIL (warning); repair moves exactly the fragment to quarantine", async () => {
    const exec = copyFixture("torn-tail");
    const original = readFileSync(layoutOf(exec).journal);
    const before = snapshot(exec);
    const { events, findings } = await readAll(exec);
    expect(events).toBe(6);
    expect(findings.map((f) => [f.code, f.severity, f.line, f.byteOffset])).toEqual([["TORN_TAIL", "warning", 6, original.lastIndexOf(10) + 1]]);
    expect(snapshot(exec)).toEqual(before);
    const plan = await planRepair(exec);
    expect(snapshot(exec)).toEqual(before);
    const res = await applyRepair(plan);
    const journal = readFileSync(layoutOf(exec).journal);
    const quarantined = readFileSync(res.quarantined as string);
    expect(Buffer.concat([journal, quarantined]).equals(original)).toBe(true);
    expect(quarantined.length).toBe(37);
    expect(await readAll(exec)).toEqual({ events: 6, findings: [] });
  });

  it("a corrupt line in the middle: CORRUPT_LINE with line and byte offset; repair never touches it", async () => {
    const exec = copyFixture("corrupt-middle");
    const original = readFileSync(layoutOf(exec).journal);
    const { events, findings } = await readAll(exec);
    expect(events).toBe(6);
    const at = original.indexOf('{"id":"broken"');
    expect(findings.map((f) => [f.code, f.severity, f.byteOffset])).toEqual([["CORRUPT_LINE", "error", at]]);
    expect(findings[0].line).toBe(original.subarray(0, at).toString().split("\n").length - 1);
    const plan = await planRepair(exec);
    expect(plan.counts.corruptLines).toBe(1);
    await applyRepair(plan);
    expect(readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
  });

  it("invalid UTF-8: INVALID_UTF8 finding, file untouched", async () => {
    const exec = copyFixture("invalid-utf8");
    const before = snapshot(exec);
    const { events, findings } = await readAll(exec);
    expect(events).toBe(5);
    expect(findings.map((f) => [f.code, f.line, f.byteOffset])).toEqual([["INVALID_UTF8", 0, 0]]);
    expect(snapshot(exec)).toEqual(before);
  });

  it("a 50 MB single line reads correctly with memory bounded by the line", async () => {
    const exec = mkdtempSync(`${tmpdir()}/hwj-bad-big-`);
    dirs.push(exec);
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    const fd = openSync(layoutOf(exec).journal, "w");
    const head = '{"id":"1-big","timestamp":"2026-01-01T00:00:00.000Z","type":"file.updated","data":{"content":"';
    writeSync(fd, head);
    const piece = Buffer.alloc(1024 * 1024, "a");
    const BODY_MB = 50;
    for (let i = 0; i < BODY_MB; i++) writeSync(fd, piece);
    writeSync(fd, '"}}\n{"id":"2","timestamp":"t","type":"info","data":1}\n');
    closeSync(fd);
    const rssBefore = process.memoryUsage().rss;
    const r = await openPlainReader(exec);
    const seen: { line: number; length: number; type: string }[] = [];
    let peak = 0;
    for await (const rec of r.events()) {
      seen.push({ line: rec.line, length: rec.bytes.length, type: rec.event.type });
      peak = Math.max(peak, process.memoryUsage().rss);
    }
    const last = await r.tail(1);
    await r.close();
    expect(seen).toEqual([
      { line: 0, length: head.length + BODY_MB * 1024 * 1024 + 3, type: "file.updated" },
      { line: 1, length: 49, type: "info" },
    ]);
    expect(last.map((x) => x.line)).toEqual([1]);
    // The line (50 MB) + its string form (50 MB) + JSON parse: well under 8× the line.
    expect(peak - rssBefore).toBeLessThan(400 * 1024 * 1024);
  }, 60_000);

  it.each([
    ["sidecar-larger", "lying", 6],
    ["sidecar-smaller", "stale", 6],
    ["sidecar-malformed", "invalid", 6],
  ])("a sidecar that lies (%s) is judged %s and recounted by the writer, journal untouched", async (name, status, events) => {
    const exec = copyFixture(name);
    const journal = readFileSync(layoutOf(exec).journal);
    expect((await readSidecarStatus(exec, journal.length)).status).toBe(status);
    const w = await openJournalWriter(exec);
    expect(w.position().events).toBe(events);
    await w.close();
    expect(readFileSync(layoutOf(exec).journal).equals(journal)).toBe(true);
    expect((await readSidecarStatus(exec, journal.length)).status).toBe("ok");
  });

  it("a lock held by a live process: an offline claim refuses with LOCK_HELD and changes nothing", async () => {
    const exec = copyFixture("torn-tail");
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(layoutOf(exec).lock, JSON.stringify({ pid: sleeper.pid, lockId: "x", runId: "r", startTime: new Date().toISOString(), lastHeartbeat: new Date().toISOString() }));
      const before = snapshot(exec);
      await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
      expect(snapshot(exec)).toEqual(before);
      // A legacy bare-pid lock naming a live process (our own) is refused the same way.
      writeFileSync(layoutOf(exec).lock, String(process.pid));
      await expect(claimLockForOfflineTool(exec)).rejects.toMatchObject({ code: "LOCK_HELD" });
      expect(readFileSync(layoutOf(exec).lock, "utf8")).toBe(String(process.pid));
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("a dieted directory: reader, writer and repair refuse with JOURNAL_DIETED; a half pair is HALF_PAIR", async () => {
    const exec = copyFixture("dieted-pair");
    const before = snapshot(exec);
    await expect(openPlainReader(exec)).rejects.toMatchObject({ code: "JOURNAL_DIETED" });
    await expect(openJournalWriter(exec)).rejects.toMatchObject({ code: "JOURNAL_DIETED", hint: expect.stringContaining("restore") });
    await expect(planRepair(exec)).rejects.toMatchObject({ code: "JOURNAL_DIETED" });
    expect(snapshot(exec)).toEqual(before);
    rmSync(layoutOf(exec).manifest);
    await expect(openPlainReader(exec)).rejects.toMatchObject({ code: "HALF_PAIR" });
    await expect(openJournalWriter(exec)).rejects.toMatchObject({ code: "HALF_PAIR" });
  });

  it("a FIFO where events.jsonl should be: NOT_A_REGULAR_FILE, without blocking", async () => {
    const exec = mkdtempSync(`${tmpdir()}/hwj-bad-fifo-`);
    dirs.push(exec);
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    execFileSync("mkfifo", [layoutOf(exec).journal]);
    await expect(openPlainReader(exec)).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    await expect(openJournalWriter(exec)).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    await expect(planRepair(exec)).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    expect(statSync(layoutOf(exec).journal).isFIFO()).toBe(true);
  }, 10_000);

  it("a directory where events.jsonl should be: NOT_A_REGULAR_FILE; a missing exec: EXEC_NOT_FOUND; no journal: JOURNAL_NOT_FOUND", async () => {
    const exec = mkdtempSync(`${tmpdir()}/hwj-bad-dir-`);
    dirs.push(exec);
    await expect(openPlainReader(exec)).rejects.toMatchObject({ code: "JOURNAL_NOT_FOUND" });
    mkdirSync(layoutOf(exec).journal, { recursive: true });
    await expect(openPlainReader(exec)).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    await expect(openJournalWriter(exec)).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    await expect(openPlainReader(`${exec}/nope`)).rejects.toMatchObject({ code: "EXEC_NOT_FOUND" });
    await expect(openJournalWriter(`${exec}/nope`)).rejects.toMatchObject({ code: "EXEC_NOT_FOUND" });
  });
});
