import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { scanLineChunks, visitLineChunks, type LineVisitor } from "./line-scanner.js";

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
