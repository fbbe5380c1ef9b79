import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf, type JournalReader } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { parseCursor, stateAt } from "./state-at.js";
import { T } from "./test-support/builders.js";

const BASE_MS = Date.parse("2026-03-05T18:00:00.000Z");
const iso = (s: number): string => new Date(BASE_MS + s * 1000).toISOString();

/** Journal: line i has timestamp `stamps[i]` seconds after BASE; ids repeat on lines 2 and 4. */
const rows: [string, number, string, unknown][] = [
  ["1-a", 0, "plan.updated", { plan: [] }],
  ["2-b", 1, "state.transition", { transitionType: "RunStarted", transition: T.runStarted("r1"), resultingState: {} }],
  ["3-dup", 2, "state.transition", { transitionType: "CodonStarted", transition: T.codonStarted("r1", "a"), resultingState: {} }],
  ["4-c", 5, "info", { message: "clock jumps ahead" }],
  ["3-dup", 3, "state.transition", { transitionType: "CodonStarted", transition: T.codonStarted("r1", "b"), resultingState: {} }],
  ["6-d", 6, "state.transition", { transitionType: "RunCompleted", transition: T.runCompleted("r1"), resultingState: {} }],
];

let exec: string;
let reader: JournalReader;
beforeAll(async () => {
  exec = mkdtempSync(path.join(os.tmpdir(), "state-at-"));
  mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  const text = rows.map(([id, s, type, data]) => JSON.stringify({ id, timestamp: iso(s), type, data })).join("\n") + "\n";
  writeFileSync(layoutOf(exec).journal, text);
  reader = await openReader(exec);
});
afterAll(async () => {
  await reader.close();
  rmSync(exec, { recursive: true, force: true });
});

describe("parseCursor", () => {
  it("reads digits as a line, ISO dates/times as UTC times, <ms>-<base36> as an event id", () => {
    expect(parseCursor("12")).toEqual({ kind: "line", line: 12 });
    expect(parseCursor("2026-03-05T18:00:01.000Z")).toMatchObject({ kind: "time", ms: BASE_MS + 1000 });
    expect(parseCursor("2026-03-05T18:00:01")).toMatchObject({ kind: "time", ms: BASE_MS + 1000 });
    expect(parseCursor("2026-03-05")).toMatchObject({ kind: "time", ms: Date.parse("2026-03-05T00:00:00Z") });
    expect(parseCursor("1772736420200-b2y6pzssd")).toEqual({ kind: "id", id: "1772736420200-b2y6pzssd" });
  });

  it("rejects anything else with BAD_CURSOR", () => {
    for (const bad of ["", "abc", "-3", "12.5", "2026-13-45T99:99"]) {
      expect(() => parseCursor(bad), bad).toThrow(expect.objectContaining({ code: "BAD_CURSOR" }));
    }
  });
});

describe("stateAt: the fold of a prefix, inclusive", () => {
  it("a line number includes that line", async () => {
    const at1 = await stateAt(reader, parseCursor("1"));
    expect(at1.state.runs.map((r) => r.runId)).toEqual(["r1"]);
    expect(at1.state.runs[0].codons).toEqual([]);
    const at2 = await stateAt(reader, parseCursor("2"));
    expect(at2.state.runs[0].codons.map((c) => c.codonId)).toEqual(["a"]);
    expect(at2.resolved.toLine).toBe(2);
  });

  it("a line past the end is LINE_OUT_OF_RANGE", async () => {
    await expect(stateAt(reader, parseCursor("6"))).rejects.toMatchObject({ code: "LINE_OUT_OF_RANGE" });
  });

  it("an event id means its FIRST line (ids are not unique)", async () => {
    const r = await stateAt(reader, parseCursor("3-dup"));
    expect(r.resolved.toLine).toBe(2);
    expect(r.state.runs[0].codons.map((c) => c.codonId)).toEqual(["a"]);
    await expect(stateAt(reader, parseCursor("9-zzz"))).rejects.toMatchObject({ code: "BAD_CURSOR" });
  });

  it("a time stops before the first line stamped later, and counts later lines stamped earlier", async () => {
    // T = +4 s: lines 0..2 are ≤ T, line 3 (+5 s) is later: the prefix ends at line 2; line 4 (+3 s) is excluded.
    const r = await stateAt(reader, parseCursor(iso(4)));
    expect(r.resolved).toEqual({ toLine: 2, laterLinesAtOrBefore: 1 });
    expect(r.state.runs[0].codons.map((c) => c.codonId)).toEqual(["a"]);
    const exact = await stateAt(reader, parseCursor(iso(6)));
    expect(exact.resolved.toLine).toBe(5);
    expect(exact.state.runs[0].status).toBe("completed");
    const before = await stateAt(reader, parseCursor("2020-01-01"));
    expect(before.resolved.toLine).toBe(-1);
    expect(before.state).toEqual({ runs: [], currentRunId: null, executionPlan: [] });
  });
});
