import * as fs from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { sha256Hex } from "@hankweave-journal/cas";
import { DietedSource } from "./dieted-source.js";
import { readManifest } from "./manifest.js";
import { restoreJournal } from "./restore.js";
import { originalPieces, restoreWorkersFor, type PipelineSizes, type PipelineStats } from "./restore-pipeline.js";
import { codeOf, dietBytes, dietWithLyingLineLength, finishedJournal, rmExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

/** Bodies of 4–30 KB with everything JSON escapes (controls, quotes, backslashes), non-ASCII text, and repeats. */
function bodiesFor(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    out.push(`# file ${i % 5}\n"quoted" \\ tab\t cr\r ff\f bs\b nul\u0000 us\u001f del\u007f é 😀 \u2028 ${"x".repeat(4096 + (i % 5) * 5000)}\n`);
  }
  return out;
}

/** Everything `originalPieces` yields, concatenated, each slot released after it was read. */
async function piecesOf(src: DietedSource, workers: number, stats: PipelineStats, sizes?: PipelineSizes): Promise<Buffer> {
  const got: Buffer[] = [];
  for await (const { parts, release } of originalPieces(src, workers, stats, sizes)) {
    got.push(Buffer.concat(parts));
    release?.();
  }
  return Buffer.concat(got);
}

async function withSource<T>(exec: string, f: (src: DietedSource) => Promise<T>): Promise<T> {
  const l = layoutOf(exec);
  const src = await DietedSource.open(l, await readManifest(l));
  try {
    return await f(src);
  } finally {
    await src.close();
  }
}

describe("restore fast path (worker threads)", () => {
  it("rebuilds every frame in the workers, byte for byte, whatever the worker count, output buffer and body arena sizes", async () => {
    // Verbatim frames, frames dense in bodies, a final line without newline.
    const original = Buffer.concat([
      finishedJournal(bodiesFor(2), null, 300),
      finishedJournal(bodiesFor(40), "RunCompleted", 10),
      Buffer.from('{"torn":'),
    ]);
    const exec = await dietBytes(original, { frameTargetBytes: 3000, kind: "seekable" });
    made.push(exec);
    const frames = (await readManifest(layoutOf(exec))).frames!.length;
    expect(frames).toBeGreaterThan(10);
    for (const [workers, sizes] of [
      [1, {}],
      [2, {}],
      [3, { slotBytes: 1000 }], // frames spill over several output buffers
      [2, { bodyCacheBytes: 40_000 }], // the arena wraps and evicts; some bodies are too large for it
      [1, { slotBytes: 4096, bodyCacheBytes: 1 }], // no body fits the arena
      [2, { wasmEscapeMaxBytes: 0 }], // every body escaped by the JavaScript escaper
      [1, { wasmEscapeMaxBytes: 10_000, bodyCacheBytes: 1 }], // both escapers, bodies outside the arena
    ] as [number, PipelineSizes][]) {
      const stats = {} as PipelineStats;
      const got = await withSource(exec, (src) => piecesOf(src, workers, stats, sizes));
      expect(got.equals(original)).toBe(true);
      expect(stats.fallbackFrom).toBeNull();
      expect(stats.fastFrames).toBe(frames);
      expect(stats.workers).toBeGreaterThan(0);
    }
  });

  it("restoreJournal with workers publishes the original bytes; workers: 0 takes the in-thread path", async () => {
    const original = finishedJournal(bodiesFor(12), "RunCompleted", 40);
    for (const workers of [2, 0]) {
      const exec = await dietBytes(original, { frameTargetBytes: 5000, kind: "seekable" });
      made.push(exec);
      const stats = {} as PipelineStats;
      const r = await restoreJournal(exec, { workers, stats });
      expect(r.status).toBe("restored");
      expect(r.originalSha256).toBe(sha256Hex(original));
      expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
      expect(stats.fastFrames > 0).toBe(workers > 0);
    }
  });

  it("without WebAssembly (node --jitless) both paths escape in JavaScript: same bytes, no fallback", async () => {
    const original = finishedJournal(bodiesFor(12), "RunCompleted", 40);
    const execs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const exec = await dietBytes(original, { frameTargetBytes: 5000, kind: "seekable" });
      made.push(exec);
      execs.push(exec);
    }
    const script = `
      import { restoreJournal } from ${JSON.stringify(fileURLToPath(new URL("./restore.ts", import.meta.url)))};
      const out = [typeof WebAssembly];
      for (const [exec, workers] of ${JSON.stringify(execs.map((e, i) => [e, i === 0 ? 1 : 0]))}) {
        const stats = {};
        const r = await restoreJournal(exec, { workers, stats });
        out.push({ sha: r.originalSha256, workers, fastFrames: stats.fastFrames ?? 0, fallback: stats.fallbackReason ?? null });
      }
      console.log(JSON.stringify(out));
    `;
    const r = spawnSync(process.execPath, ["--jitless", "--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const [wasmType, withWorker, inThread] = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(wasmType).toBe("undefined");
    expect(withWorker).toMatchObject({ sha: sha256Hex(original), workers: 1, fallback: null });
    expect(withWorker.fastFrames).toBeGreaterThan(0);
    expect(inThread).toMatchObject({ sha: sha256Hex(original), workers: 0 });
    for (const exec of execs) expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
  });

  it("hands a frame whose body is corrupt, and all after it, to the in-thread path, which throws the stable code", async () => {
    const bodies = bodiesFor(8);
    const original = finishedJournal(bodies, "RunCompleted", 40);
    const exec = await dietBytes(original, { frameTargetBytes: 3000, kind: "seekable" });
    made.push(exec);
    const l = layoutOf(exec);
    const last = bodies[bodies.length - 1];
    // Same content size, other bytes: the worker's decode passes, its hash check does not.
    fs.writeFileSync(l.casBlob(sha256Hex(Buffer.from(last))), fs.readFileSync(l.casBlob(sha256Hex(Buffer.from(bodies[0])))));
    const stats = {} as PipelineStats;
    expect(await codeOf(withSource(exec, (src) => piecesOf(src, 2, stats)))).toBe("CAS_CORRUPT");
    expect(stats.fallbackFrom).not.toBeNull();
    expect(stats.fallbackFrom!).toBeGreaterThan(0);
    expect(stats.fastFrames).toBe(stats.fallbackFrom);
    expect(await codeOf(restoreJournal(exec, { workers: 2 }))).toBe("CAS_CORRUPT");
    expect(fs.existsSync(l.journal)).toBe(false);
    expect(fs.existsSync(l.restoreTmp)).toBe(false);
  });

  it("a manifest length that lies is left to the in-thread path: MANIFEST_MISMATCH, nothing published", async () => {
    const { exec, frame } = await dietWithLyingLineLength(finishedJournal(bodiesFor(5), "RunCompleted", 3));
    made.push(exec);
    const layout = layoutOf(exec);
    const stats = {} as PipelineStats;
    expect(await codeOf(restoreJournal(exec, { workers: 1, stats }))).toBe("MANIFEST_MISMATCH");
    expect(stats.fallbackFrom).toBe(frame);
    expect(stats.fallbackReason).toBe("line length");
    expect(fs.existsSync(layout.journal)).toBe(false);
  });
});

describe("restore fast path of a one-frame diet (one worker decodes the stream)", () => {
  it("by default a one-frame journal gets its worker from 256 MiB (one, whatever the cores), a seekable one from 16 MiB", () => {
    const MiB = 1024 * 1024;
    expect([100 * MiB, 256 * MiB - 1, 256 * MiB, 4096 * MiB].map((b) => restoreWorkersFor(b, 2, true))).toEqual([0, 0, 1, 1]);
    expect(restoreWorkersFor(1024 * MiB, 8, true)).toBe(1);
    expect([16 * MiB - 1, 16 * MiB, 100 * MiB, 256 * MiB].map((b) => restoreWorkersFor(b, 2))).toEqual([0, 1, 1, 2]);
  });

  it("rebuilds every block in the worker, byte for byte, whatever the output buffer and body arena sizes", async () => {
    const original = Buffer.concat([
      finishedJournal(bodiesFor(2), null, 300),
      finishedJournal(bodiesFor(40), "RunCompleted", 10),
      Buffer.from('{"torn":'),
    ]);
    const exec = await dietBytes(original, { frameTargetBytes: 3000 });
    made.push(exec);
    const manifest = await readManifest(layoutOf(exec));
    expect(manifest.framing).toBe("one-frame");
    const frames = manifest.frames!.length;
    expect(frames).toBeGreaterThan(10);
    const withBodies = manifest.frames!.filter((f) => f.rewritten.length > 0).length;
    expect(withBodies).toBeGreaterThan(5);
    for (const [workers, sizes, pieces] of [
      [1, {}, "all"], // blocks with bodies go out as two buffers' pieces
      [2, {}, "all"], // one stream: one worker whatever is asked
      [1, { slotBytes: 1000 }, "none"], // blocks larger than an output buffer: copied, over several
      [1, { slotBytes: 6000 }, "some"], // some blocks fit a buffer, their bodies do not: copied
      [1, { bodyCacheBytes: 40_000 }, "all"],
      [1, { wasmEscapeMaxBytes: 0, bodyCacheBytes: 1 }, "all"],
    ] as [number, PipelineSizes, "all" | "some" | "none"][]) {
      const stats = {} as PipelineStats;
      const got = await withSource(exec, (src) => piecesOf(src, workers, stats, sizes));
      expect(got.equals(original)).toBe(true);
      expect(stats).toMatchObject({ workers: 1, fastFrames: frames, fallbackFrom: null, fallbackReason: null });
      expect(stats.bodiesRead).toBeGreaterThan(0);
      if (pieces === "all") expect(stats.pieceFrames).toBe(withBodies);
      else if (pieces === "none") expect(stats.pieceFrames).toBe(0);
      else expect(stats.pieceFrames > 0 && stats.pieceFrames < withBodies).toBe(true);
    }
    const stats = {} as PipelineStats;
    const r = await restoreJournal(exec, { workers: 1, stats });
    expect(r.originalSha256).toBe(sha256Hex(original));
    expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
    expect(stats.fastFrames).toBe(frames);
  });

  it("a damaged stream or body is handed to the in-thread path: the stable code, nothing published", async () => {
    const bodies = bodiesFor(8);
    const original = finishedJournal(bodies, "RunCompleted", 40);
    const cases: [string, (l: ReturnType<typeof layoutOf>) => void, string][] = [
      // Bytes after the frame: every block decodes, the worker's end check fails.
      ["trailing bytes", (l) => fs.appendFileSync(l.dietedJournal, Buffer.from([1, 2, 3])), "ZSTD_CORRUPT"],
      // The frame cut short: a block cannot be decoded.
      ["truncated", (l) => fs.truncateSync(l.dietedJournal, fs.statSync(l.dietedJournal).size - 40), "ZSTD_CORRUPT"],
      // A body of the same size with other bytes: its hash check fails in the worker.
      ["corrupt body", (l) => fs.writeFileSync(l.casBlob(sha256Hex(Buffer.from(bodies[7]))), fs.readFileSync(l.casBlob(sha256Hex(Buffer.from(bodies[0]))))), "CAS_CORRUPT"],
    ];
    for (const [what, damage, code] of cases) {
      const exec = await dietBytes(original, { frameTargetBytes: 3000 });
      made.push(exec);
      const l = layoutOf(exec);
      damage(l);
      const stats = {} as PipelineStats;
      expect(await codeOf(withSource(exec, (src) => piecesOf(src, 1, stats))), what).toBe(code);
      expect(stats.workers, what).toBe(1);
      expect(stats.fallbackReason, what).not.toBeNull();
      if (what === "trailing bytes") expect(stats.fallbackFrom).toBe(stats.fastFrames);
      expect(await codeOf(restoreJournal(exec, { workers: 1 })), what).toBe(code);
      expect(fs.existsSync(l.journal), what).toBe(false);
      expect(fs.existsSync(l.restoreTmp), what).toBe(false);
    }
  });
});

describe("one-frame blocks in this thread (DietedSource.originalBlocks)", () => {
  it("reuses a released block's buffer for a later block and still gives back every byte; an unreleased one is never reused", async () => {
    const original = finishedJournal(bodiesFor(12), "RunCompleted", 300);
    const exec = await dietBytes(original, { frameTargetBytes: 20_000 });
    made.push(exec);
    for (const releaseEach of [true, false]) {
      const buffers: ArrayBufferLike[] = [];
      const got = await withSource(exec, async (src) => {
        expect(src.oneFrame).toBe(true);
        const out: Buffer[] = [];
        for await (const { parts, release } of src.originalBlocks()) {
          // The block's own bytes: the part that is not a cached body (the first part of a block is always the block's).
          buffers.push(parts[0].buffer);
          out.push(Buffer.concat(parts));
          if (releaseEach) release?.();
        }
        return Buffer.concat(out);
      });
      expect(got.equals(original)).toBe(true);
      expect(buffers.length).toBeGreaterThan(5);
      const distinct = new Set(buffers).size;
      if (releaseEach) expect(distinct).toBeLessThanOrEqual(4);
      else expect(distinct).toBe(buffers.length);
    }
  });
});
