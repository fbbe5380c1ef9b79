import { describe, expect, it } from "vitest";
import { compareRows, matchesFilter, parseFinishedBefore, parseSortColumn, parseStatusList } from "./filter.js";
import type { FleetRow } from "./execution-row.js";
import { decideByKind } from "./batch.js";
import type { FleetEntry } from "./discover.js";

const NOW = Date.parse("2026-12-08T00:00:00.000Z");

function row(rel: string, over: Partial<FleetRow> = {}): FleetRow {
  return {
    path: `/r/${rel}`, rel, kind: "plain", code: null, message: null, runs: 1, lastRunId: "r", lastStatus: "completed",
    lastEndTime: "2026-11-30T00:00:00.000Z", totalCost: 1, events: 10, storedBytes: 100, lock: "none", source: "fold", ...over,
  };
}

describe("fleet filters", () => {
  it("--finished-before takes durations before now and ISO dates, and refuses anything else with USAGE", () => {
    expect(parseFinishedBefore("7d", NOW)).toBe(Date.parse("2026-12-01T00:00:00.000Z"));
    expect(parseFinishedBefore("90s", NOW)).toBe(NOW - 90_000);
    expect(parseFinishedBefore("2w", NOW)).toBe(NOW - 14 * 86_400_000);
    expect(parseFinishedBefore("2026-11-30", NOW)).toBe(Date.parse("2026-11-30"));
    expect(parseFinishedBefore("2026-11-30T12:00:00Z", NOW)).toBe(Date.parse("2026-11-30T12:00:00Z"));
    for (const bad of ["yesterday", "7", "7y", "2026-13-45", ""]) expect(() => parseFinishedBefore(bad, NOW)).toThrow(expect.objectContaining({ code: "USAGE" }));
  });

  it("--status is a comma list of run statuses or none; --sort one column", () => {
    expect(parseStatusList("completed,none")).toEqual(["completed", "none"]);
    expect(() => parseStatusList("done")).toThrow(expect.objectContaining({ code: "USAGE" }));
    expect(parseSortColumn("cost")).toBe("cost");
    expect(() => parseSortColumn("size")).toThrow(expect.objectContaining({ code: "USAGE" }));
  });

  it("a row passes when every condition holds; no end time never passes --finished-before", () => {
    const cut = Date.parse("2026-12-01");
    expect(matchesFilter(row("a"), { status: ["completed"], finishedBeforeMs: cut })).toBe(true);
    expect(matchesFilter(row("a"), { finishedBeforeMs: Date.parse("2026-11-01") })).toBe(false);
    expect(matchesFilter(row("b", { lastStatus: "running", lastEndTime: null }), { finishedBeforeMs: cut })).toBe(false);
    expect(matchesFilter(row("c", { kind: "broken", lastStatus: null }), { status: ["none"] })).toBe(true);
    expect(matchesFilter(row("c", { kind: "broken", lastStatus: null }), { status: ["completed"] })).toBe(false);
  });

  it("sorts by a column with unknown values last and ties by path; --reverse flips the column only", () => {
    const rows = [row("b", { totalCost: 2 }), row("a", { totalCost: 2 }), row("c", { totalCost: null }), row("d", { totalCost: 1 })];
    expect([...rows].sort(compareRows("cost")).map((r) => r.rel)).toEqual(["d", "a", "b", "c"]);
    expect([...rows].sort(compareRows("cost", true)).map((r) => r.rel)).toEqual(["a", "b", "d", "c"]);
  });
});

describe("decideByKind", () => {
  const entry = (kind: FleetEntry["kind"], over: Partial<FleetEntry> = {}): FleetEntry => ({
    path: "/r/x", rel: "x", execution: true, kind, code: null, message: null, journalBytes: 1, manifest: null, restoredFrom: null, ...over,
  });

  it("skips what is done or absent and fails what is broken, per operation", () => {
    expect(decideByKind("diet", entry("plain"))).toMatchObject({ act: "run" });
    expect(decideByKind("diet", entry("extended"))).toMatchObject({ act: "skip", code: "ALREADY_DIETED" });
    expect(decideByKind("diet", entry("none"))).toMatchObject({ act: "skip", code: "JOURNAL_NOT_FOUND" });
    expect(decideByKind("restore", entry("seekable"))).toMatchObject({ act: "run" });
    expect(decideByKind("restore", entry("plain", { restoredFrom: "compatible" }))).toMatchObject({ act: "skip", code: "NOTHING_TO_RESTORE" });
    expect(decideByKind("verify", entry("compatible"))).toMatchObject({ act: "run" });
    expect(decideByKind("verify", entry("broken", { code: "HALF_PAIR", message: "half" }))).toMatchObject({ act: "fail", code: "HALF_PAIR" });
  });
});
