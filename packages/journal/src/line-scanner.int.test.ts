import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { scanLineChunks, seekLineStart, visitLineChunks, type LineVisitor } from "./line-scanner.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "line-scanner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Seen = [line: number, offset: number, bytes: string, terminated: boolean];

async function bothScans(bytes: Buffer, chunkBytes: number, start = { offset: 0, line: 0 }): Promise<{ kept: Seen[]; visited: Seen[] }> {
  const file = path.join(dir, "j.jsonl");
  writeFileSync(file, bytes);
  const fh = await open(file, "r");
  try {
    const kept: Seen[] = [];
    const keep: LineVisitor<Seen> = (buf, s, e, line, offset, terminated) => [line, offset, buf.toString("latin1", s, e), terminated];
    for await (const batch of scanLineChunks(fh, keep, start, chunkBytes)) kept.push(...batch);
    const visited: Seen[] = [];
    // Copy during the call: visitLineChunks reuses its buffers.
    const visit: LineVisitor<never> = (buf, s, e, line, offset, terminated) => void visited.push([line, offset, buf.toString("latin1", s, e), terminated]);
    for await (const _ of visitLineChunks(fh, visit, start, chunkBytes)) expect(visited.length).toBeGreaterThanOrEqual(0);
    return { kept, visited };
  } finally {
    await fh.close();
  }
}

describe("visitLineChunks (reused buffers, read ahead) sees exactly the lines scanLineChunks yields", () => {
  it("for any bytes and any chunk size: same lines, offsets, bytes and torn tail", async () => {
    const byte = fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 255 }), fc.constant(0x61));
    await fc.assert(
      fc.asyncProperty(fc.array(byte, { maxLength: 400 }), fc.integer({ min: 1, max: 64 }), async (arr, chunk) => {
        const { kept, visited } = await bothScans(Buffer.from(arr), chunk);
        expect(visited).toEqual(kept);
      }),
      { numRuns: 300 },
    );
  });

  it("from a start anchor in the middle, and with lines many chunks long", async () => {
    const lines = ["a", "", "b".repeat(300), "c", "d".repeat(1000), "e"];
    const bytes = Buffer.from(lines.join("\n") + "\nfinal-no-newline");
    for (const chunk of [1, 7, 64, 4096]) {
      const { kept, visited } = await bothScans(bytes, chunk, { offset: 2, line: 1 });
      expect(visited).toEqual(kept);
      expect(visited[visited.length - 1]).toEqual([6, bytes.length - 16, "final-no-newline", false]);
    }
  });
});

describe("seekLineStart (newline counting) lands where a line-by-line scan shows the line", () => {
  it("for any bytes, target, start and chunk size: the same line start, or the furthest one at end of file; the same anchors", async () => {
    const byte = fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 255 }), fc.constant(0x61));
    await fc.assert(
      fc.asyncProperty(
        fc.array(byte, { maxLength: 400 }), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 9 }),
        async (arr, target, startIdx, chunk, every) => {
          const bytes = Buffer.from(arr);
          const { kept } = await bothScans(bytes, 64);
          // Start from one of the scan's own line starts (an anchor), or 0.
          const begin = kept[Math.min(startIdx, kept.length - 1)] ?? [0, 0, "", true];
          const start = { line: begin[0], offset: begin[1] };
          const fh = await open(path.join(dir, "j.jsonl"), "r");
          try {
            const anchors: [number, number][] = [];
            const at = await seekLineStart(fh, start, target, (l, o) => void anchors.push([l, o]), every, chunk);
            const fromStart = kept.filter((l) => l[0] >= start.line);
            const hit = fromStart.find((l) => l[0] === target);
            if (target <= start.line) expect(at).toEqual(start);
            else if (hit) expect(at).toEqual({ line: target, offset: hit[1] });
            else {
              // Past the end: the line after the last \n (end of file when the file ends in one).
              const lastTerminated = [...fromStart].reverse().find((l) => l[3]);
              const expected = lastTerminated
                ? { line: lastTerminated[0] + 1, offset: lastTerminated[1] + Buffer.byteLength(lastTerminated[2], "latin1") + 1 }
                : start;
              expect(at).toEqual(expected);
            }
            // Anchors: every terminated line passed before the target whose number is a multiple of `every`.
            const want = fromStart.filter((l) => l[3] && l[0] < Math.max(target, start.line) && l[0] % every === 0).map((l): [number, number] => [l[0], l[1]]);
            expect(anchors).toEqual(want);
          } finally {
            await fh.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
