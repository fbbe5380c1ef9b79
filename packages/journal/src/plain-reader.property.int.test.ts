/** Property: for any bytes at all, the plain reader yields what the independent oracle says. */
import fc from "fast-check";
import { rmSync, truncateSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isJournalError, layoutOf, type Finding } from "@hankweave-journal/core";
import { journalOracle, makeExecWithJournal, eventLine } from "./testing/index.js";
import { ANCHOR_EVERY_LINES, openPlainReader } from "./plain-reader.js";
import { READ_CHUNK_BYTES } from "./line-scanner.js";

const piece = fc.oneof(
  fc.constantFrom("\n", "\n\n", " \n", "\r\n", "{", "}", '"', "[1]\n"),
  fc.integer({ min: 0, max: 50 }).map((i) => eventLine(i, ["info", "state.transition", "tool.result"][i % 3], i * 7)),
  fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a).toString("latin1")),
);

describe("plain reader against the oracle on arbitrary bytes", () => {
  it("lines, events, findings and tail agree for any journal bytes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(piece.map((s) => Buffer.from(s, "utf8")), fc.uint8Array({ maxLength: 30 }).map((a) => Buffer.from(a))), { maxLength: 40 }), async (parts) => {
        const bytes = Buffer.concat(parts);
        const o = journalOracle(bytes);
        const exec = makeExecWithJournal(bytes, "hwj-prop-");
        try {
          const r = await openPlainReader(exec);
          const lines = [];
          for await (const l of r.lines()) lines.push([l.line, l.offset, Buffer.from(l.bytes).toString("hex"), l.terminated]);
          expect(lines).toEqual(o.lines.map((l) => [l.line, l.offset, l.bytes.toString("hex"), l.terminated]));
          const findings: Finding[] = [];
          const events = [];
          for await (const e of r.events({ onFinding: (f) => findings.push(f) })) events.push([e.line, e.offset, JSON.stringify(e.event)]);
          expect(events).toEqual(o.events.map((e) => [e.line, e.offset, JSON.stringify(e.event)]));
          expect(findings.map((f) => [f.code, f.line, f.byteOffset])).toEqual(o.findings.map((f) => [f.code, f.line, f.byteOffset]));
          expect((await r.tail(3)).map((e) => e.line)).toEqual(o.events.slice(-3).map((e) => e.line));
          await r.close();
        } finally {
          rmSync(exec, { recursive: true, force: true });
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe("plain reader getLine across anchors", () => {
  // 3.5 anchor spans of lines, with blank, corrupt and chunk-crossing lines near the anchor lines.
  const lines: string[] = [];
  for (let i = 0; i < ANCHOR_EVERY_LINES * 3 + ANCHOR_EVERY_LINES / 2; i++) {
    if (i % ANCHOR_EVERY_LINES === 1) lines.push("");
    else if (i % ANCHOR_EVERY_LINES === ANCHOR_EVERY_LINES - 1) lines.push("{corrupt");
    else if (i === ANCHOR_EVERY_LINES * 2) lines.push(eventLine(i, "tool.result", READ_CHUNK_BYTES + 1000).trimEnd());
    else lines.push(eventLine(i, ["info", "state.transition"][i % 2], i % 97).trimEnd());
  }
  const bytes = Buffer.from(`${lines.join("\n")}\n${eventLine(1, "info").slice(0, 20)}`);
  const o = journalOracle(bytes);
  const want = (line: number): string | null => {
    const e = o.events.find((x) => x.line === line);
    return e ? `${e.offset} ${JSON.stringify(e.event)}` : null;
  };

  it("returns the oracle's event (or null) for lines asked in any order, as anchors are learned", async () => {
    const exec = makeExecWithJournal(bytes, "hwj-getline-");
    try {
      const r = await openPlainReader(exec);
      const n = o.lines.length;
      const pick = fc.integer({ min: 0, max: n - 1 });
      const near = fc.constantFrom(0, 1, ANCHOR_EVERY_LINES - 1, ANCHOR_EVERY_LINES, ANCHOR_EVERY_LINES + 1, 2 * ANCHOR_EVERY_LINES, 3 * ANCHOR_EVERY_LINES, n - 2, n - 1);
      await fc.assert(
        fc.asyncProperty(fc.array(fc.oneof(pick, near), { minLength: 1, maxLength: 12 }), async (asked) => {
          for (const line of asked) {
            const got = await r.getLine(line);
            expect(got === null ? null : `${got.offset} ${JSON.stringify(got.event)}`).toBe(want(line));
            if (got !== null) expect(Buffer.from(got.bytes).equals(o.lines[line].bytes)).toBe(true);
          }
        }),
        { numRuns: 30 },
      );
      // The torn tail is no event, and past it is out of range.
      expect(await r.getLine(n - 1)).toBeNull();
      const err = await r.getLine(n).then(() => null, (e: unknown) => e);
      expect(isJournalError(err, "LINE_OUT_OF_RANGE")).toBe(true);
      // Anchors learned past a truncation are dropped: the lines still there read right.
      const cut = o.lines[ANCHOR_EVERY_LINES + 5].offset;
      truncateSync(layoutOf(exec).journal, cut);
      const o2 = journalOracle(bytes.subarray(0, cut));
      for (const line of [0, 2, ANCHOR_EVERY_LINES, ANCHOR_EVERY_LINES + 4]) {
        const e = o2.events.find((x) => x.line === line);
        const got = await r.getLine(line);
        expect(got === null ? null : got.offset).toBe(e ? e.offset : null);
      }
      expect(isJournalError(await r.getLine(ANCHOR_EVERY_LINES + 5).then(() => null, (e: unknown) => e), "LINE_OUT_OF_RANGE")).toBe(true);
      await r.close();
    } finally {
      rmSync(exec, { recursive: true, force: true });
    }
  });
});
