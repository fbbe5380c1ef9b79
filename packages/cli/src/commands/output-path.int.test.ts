import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, symlinkSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { writeSyntheticExecution } from "@hankweave-journal/audit/testing";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe("report -o never overwrites a file of an execution nor replaces a device or FIFO", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cli-outpath-"));
  const exec = path.join(dir, "exec");
  const other = path.join(dir, "other");
  writeSyntheticExecution(exec);
  writeSyntheticExecution(other);
  const l = layoutOf(exec);
  const journal = readFileSync(l.journal);
  const otherJournal = readFileSync(layoutOf(other).journal);

  it("refuses the journal, state.json and another execution's journal with OUTPUT_IN_EXECUTION (exit 1), bytes intact", async () => {
    for (const target of [l.journal, l.state, layoutOf(other).journal, path.join(l.eventsDir, "events.jsonl.zst")]) {
      const r = await cli(["report", exec, "-o", target]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^error OUTPUT_IN_EXECUTION: /);
    }
    expect(readFileSync(l.journal).equals(journal)).toBe(true);
    expect(readFileSync(layoutOf(other).journal).equals(otherJournal)).toBe(true);
  });

  it("refuses a symlink to the journal; /dev/null and a FIFO stay what they are (NOT_A_REGULAR_FILE)", async () => {
    const link = path.join(dir, "innocent.html");
    symlinkSync(l.journal, link);
    expect((await cli(["report", exec, "-o", link])).err).toMatch(/^error OUTPUT_IN_EXECUTION/);
    expect(readFileSync(l.journal).equals(journal)).toBe(true);
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    for (const target of ["/dev/null", fifo]) {
      const r = await cli(["report", exec, "-o", target]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/^error NOT_A_REGULAR_FILE/);
    }
    expect(statSync("/dev/null").isCharacterDevice()).toBe(true);
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  it("writes a regular file outside .hankweave, and -o - prints the page to stdout", async () => {
    const ok = await cli(["report", exec, "-o", path.join(exec, "report.html")]);
    expect(ok.code).toBe(0);
    expect(readFileSync(path.join(exec, "report.html"), "utf8")).toMatch(/^<!doctype html>/i);
    const out = await cli(["report", exec, "-o", "-"]);
    expect(out.code).toBe(0);
    expect(out.out).toMatch(/^<!doctype html>/i);
  });
});
