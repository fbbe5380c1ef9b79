import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { currentRunCost, totalCost, type JournalEvent } from "@hankweave-journal/core";
import { AuditFold, type AuditFoldSnapshot } from "./audit-fold.js";
import type { AuditFinding, AuditRow, EventInfo } from "./audit-types.js";
import { runCost } from "./fold-helpers.js";
import { summarizeRuns } from "./run-summary.js";

const FIXTURES = path.resolve(import.meta.dirname, "../../../fixtures/audit");

/** Parsed lines of a fixture journal (corrupt lines become reader-style findings, like the reader does). */
function load(name: string): ({ line: number; offset: number; size: number; event: JournalEvent } | { line: number; bad: true })[] {
  const text = readFileSync(path.join(FIXTURES, name, ".hankweave/events/events.jsonl"), "utf8");
  const parts = text.split("\n");
  if (parts[parts.length - 1] === "") parts.pop(); // a torn tail (no final \n) stays as the last part
  let offset = 0;
  return parts.map((l, line) => {
    const size = Buffer.byteLength(l);
    const at = offset;
    offset += size + 1;
    try {
      return { line, offset: at, size, event: JSON.parse(l) as JournalEvent };
    } catch {
      return { line, bad: true as const };
    }
  });
}

function run(lines: ReturnType<typeof load>, split: number | null): { rows: AuditRow[]; findings: AuditFinding[]; events: EventInfo[]; summary: unknown } {
  const rows: AuditRow[] = [];
  const findings: AuditFinding[] = [];
  const events: EventInfo[] = [];
  const sink = { row: (r: AuditRow) => void rows.push(r), finding: (f: AuditFinding) => void findings.push(f), event: (e: EventInfo) => void events.push(e) };
  let fold = new AuditFold(sink);
  lines.forEach((l, i) => {
    if (split !== null && i === split) {
      // What the index does: snapshot to JSON, then resume with the ids it stored.
      const snap = JSON.parse(JSON.stringify(fold.snapshot())) as AuditFoldSnapshot;
      const ids = new Map<string, number>();
      for (const e of events) if (!ids.has(e.id)) ids.set(e.id, e.line);
      fold = new AuditFold(sink, snap, ids);
    }
    if ("bad" in l) fold.finding({ code: "CORRUPT_LINE", severity: "error", message: `line ${l.line}`, line: l.line });
    else fold.event(l);
  });
  return { rows, findings, events, summary: summarizeRuns(fold.state, fold.lines) };
}

describe("the audit fold", () => {
  const names = readdirSync(FIXTURES).filter((d) => d.startsWith("ok-") || d.startsWith("planted-")).sort();

  it("resumed from a JSON snapshot at any line gives the same rows, findings and attempts as one pass", () => {
    for (const name of names) {
      const lines = load(name);
      const whole = run(lines, null);
      fc.assert(fc.property(fc.integer({ min: 0, max: lines.length }), (k) => {
        expect(run(lines, k)).toEqual(whole);
      }), { numRuns: 25 });
    }
  });

  it("keeps run and total costs bit-identical to summing every codon record again (in-place edits, kept codon costs)", () => {
    let checked = 0;
    for (const name of names) {
      let fold: AuditFold | null = null;
      const sink = {
        row: (r: AuditRow) => {
          const state = (fold as AuditFold).state;
          const run = state.runs.find((x) => x.runId === r.run);
          expect(r.runCost).toBe(run === undefined ? null : runCost(run));
          if (r.transition === "CostsIncremented") {
            expect(r.recomputed.totalCost).toBe(totalCost(state));
            expect(r.recomputed.currentRunCost).toBe(currentRunCost(state));
            checked += 1;
          }
        },
      };
      fold = new AuditFold(sink);
      for (const l of load(name)) if (!("bad" in l)) fold.event(l);
    }
    expect(checked).toBeGreaterThan(90); // 99 CostsIncremented lines in these fixtures
  });

  it("attributes non-transition events to the current run and keeps the codon of their data", () => {
    const { events } = run(load("ok-budget-loop-level"), null);
    const tokenUsage = events.find((e) => e.type === "token.usage");
    expect(tokenUsage).toMatchObject({ run: "1772736618402-nf8ud", codon: "loop-codon#0", category: "server-state" });
    expect(events.find((e) => e.type === "assistant.action")?.category).toBe("agentic-backbone");
  });
});
