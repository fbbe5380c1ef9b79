/**
 * Every journal the reference runtime wrote (../shared/conformance) reads with zero findings, the
 * expected event counts, and lines that re-serialise to the identical bytes.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layoutOf, type Finding } from "@hankweave-journal/core";
import { openPlainReader } from "./plain-reader.js";
import { openJournalWriter } from "./writer.js";
import { makeEventId } from "./envelope.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");

const EXPECTED: Record<string, { events: number; transitions: number }> = {
  "budget-global-uniform-replay": { events: 148, transitions: 70 },
  "budget-loop-level-replay": { events: 65, transitions: 33 },
  "budget-loop-replay": { events: 415, transitions: 192 },
  "budget-on-exceeded-fail-replay": { events: 22, transitions: 12 },
  "budget-on-exceeded-override-replay": { events: 49, transitions: 26 },
  "plan-gen-execution": { events: 6467, transitions: 2636 },
};

if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(existsSync(CONF)).toBe(false);
  });
}

describe.runIf(existsSync(CONF))("conformance journals", () => {
  for (const [name, want] of Object.entries(EXPECTED)) {
    it(`${name} reads ${want.events} events with zero findings, each line re-serialising to identical bytes`, async () => {
      const exec = path.join(CONF, name);
      const reader = await openPlainReader(exec);
      const findings: Finding[] = [];
      let events = 0;
      let identical = 0;
      let offset = 0;
      for await (const r of reader.events({ onFinding: (f) => findings.push(f) })) {
        expect(r.line).toBe(events);
        expect(r.offset).toBe(offset);
        offset += r.bytes.length + 1;
        const text = r.bytes.toString("utf8");
        if (JSON.stringify(JSON.parse(text)) === text && JSON.stringify(r.event) === text) identical += 1;
        events += 1;
      }
      let transitions = 0;
      for await (const _ of reader.events({ types: ["state.transition"], onFinding: (f) => findings.push(f) })) transitions += 1;
      await reader.close();
      expect(findings).toEqual([]);
      expect(events).toBe(want.events);
      expect(identical).toBe(want.events);
      expect(transitions).toBe(want.transitions);
      expect(offset).toBe(readFileSync(layoutOf(exec).journal).length);
    });
  }

  it("budget-exceeded-replay has no journal: JOURNAL_NOT_FOUND", async () => {
    await expect(openPlainReader(path.join(CONF, "budget-exceeded-replay"))).rejects.toMatchObject({ code: "JOURNAL_NOT_FOUND" });
  });

  it("our ids have the reference runtime's shape (decimal ms, '-', up to 9 base-36 chars)", () => {
    const shape = /^\d{13}-[0-9a-z]{1,9}$/;
    const theirs = readFileSync(layoutOf(path.join(CONF, "budget-loop-replay")).journal, "utf8").trim().split("\n").map((l) => JSON.parse(l).id as string);
    expect(theirs.every((id) => shape.test(id))).toBe(true);
    for (let i = 0; i < 1000; i++) expect(makeEventId(Date.now(), Math.random())).toMatch(shape);
  });

  it("appending the reference runtime's events to a copy reproduces the journal byte for byte", async () => {
    const src = path.join(CONF, "budget-loop-replay");
    const original = readFileSync(layoutOf(src).journal);
    const exec = mkdtempSync(`${tmpdir()}/hwj-conf-`);
    try {
      const reader = await openPlainReader(src);
      const events = [];
      for await (const r of reader.events()) events.push(r.event);
      await reader.close();
      const w = await openJournalWriter(exec, { durability: "batch" });
      await w.appendMany(events);
      await w.close();
      const written = readFileSync(layoutOf(exec).journal);
      expect(createHash("sha256").update(written).digest("hex")).toBe(createHash("sha256").update(original).digest("hex"));
    } finally {
      rmSync(exec, { recursive: true, force: true });
    }
  });
});
