import { createHash } from "node:crypto";
import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { POOL_MIN_BODY_BYTES, JOURNAL_ZSTD_MT_MIN_BYTES } from "./diet.js";
import { DIET_READ_CHUNK_BYTES } from "./diet-scan.js";
import { restoreJournal } from "./restore.js";
import { dietBytes, rmExec } from "./test-helpers.js";

// A compatible diet of a journal several read chunks long, above the sizes where libzstd's
// threads and the blob pool start: the scan reads into chunks the in-step verifier hands back
// once compared, the frames go to the compressor as pieces of those chunks, and the first
// POOL_MIN_BODY_BYTES of bodies compress in this thread before the pool takes the rest. Any
// chunk reused too early, or a piece handed over wrong, makes the diet fail its verification or
// the restore differ from the original.

const made: string[] = [];
afterAll(() => made.forEach(rmExec));

const line = (type: string, data: unknown): string => JSON.stringify({ id: "1", timestamp: "t", type, data });
/** A body of `bytes` distinct, poorly compressible characters. */
const body = (seed: number, bytes: number): string => {
  let s = "";
  let x = seed * 2654435761 >>> 0;
  while (s.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += (x >>> 8).toString(36);
  }
  return s.slice(0, bytes);
};

function journal(): Buffer {
  const lines: string[] = [];
  let bytes = 0;
  let k = 0;
  const push = (l: string): void => {
    lines.push(l);
    bytes += l.length + 1;
  };
  // ~3.2 read chunks: short lines, bodies (some repeated), a line longer than a chunk, a blank line.
  while (bytes < 3.2 * DIET_READ_CHUNK_BYTES) {
    k++;
    push(line("tool.result", { n: k, text: "x".repeat(200 + (k % 700)) }));
    if (k % 100 === 0) push(line("file.updated", { path: `f${k}`, content: body(k % 61, 9000 + (k % 61) * 50) }));
    if (k === 3000) push(line("assistant.action", { text: "y".repeat(DIET_READ_CHUNK_BYTES + 12345) }));
    if (k === 3001) push("");
  }
  push(line("state.transition", { type: "RunCompleted" }));
  return Buffer.from(lines.join("\n") + "\n", "utf8");
}

describe("compatible diet across read chunks (chunks reused after the verifier compared them)", () => {
  it("restores byte for byte, bodies in the CAS (in this thread, then the pool)", async () => {
    const original = journal();
    expect(original.length).toBeGreaterThan(JOURNAL_ZSTD_MT_MIN_BYTES);
    const exec = await dietBytes(original);
    made.push(exec);
    const l = layoutOf(exec);
    expect(fs.existsSync(l.journal)).toBe(false);
    const manifest = JSON.parse(fs.readFileSync(l.manifest, "utf8")) as { bodies: { moved: number; unique: number; movedBytes: number } };
    expect(manifest.bodies.unique).toBe(61);
    expect(manifest.bodies.movedBytes).toBeGreaterThan(POOL_MIN_BODY_BYTES);
    expect(61 * 9000).toBeGreaterThan(POOL_MIN_BODY_BYTES);
    const r = await restoreJournal(exec);
    expect(r.status).toBe("restored");
    const back = fs.readFileSync(l.journal);
    expect(back.length).toBe(original.length);
    expect(createHash("sha256").update(back).digest("hex")).toBe(createHash("sha256").update(original).digest("hex"));
  });
});
