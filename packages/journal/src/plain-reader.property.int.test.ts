/** Property: for any bytes at all, the plain reader yields what the independent oracle says. */
import fc from "fast-check";
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Finding } from "@hankweave-journal/core";
import { journalOracle, makeExecWithJournal, eventLine } from "./testing/index.js";
import { openPlainReader } from "./plain-reader.js";

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
