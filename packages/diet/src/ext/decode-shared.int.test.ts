import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { prng } from "@hankweave-journal/journal/testing";
import { restoreJournal } from "../restore.js";
import { rmExec, tempExec } from "../test-helpers.js";
import { applyExtDiet } from "./ext-diet.js";
import { ExtSource } from "./ext-source.js";
import { DECODE_MAX_WORKERS, EXT_RESTORE_WORKERS_MIN_BYTES, decodeBlocksInThread, decodeBlocksOnWorkers, extRestoreWorkersFor } from "./decode-pool.js";
import { threadRebuilder } from "./rebuild-wasm.js";

// Blocks rebuilt by the WebAssembly kernel are handed over as views of its shared memory (kept
// regions, freed by the consumer and taken again); a block the kernel gives up on comes back as a
// buffer of its own, transferred. Bytes identical either way.

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

/** A journal of `n` lines; the lines of `oldFrom`..`oldTo` have a timestamp before 1970 (the kernel gives their block up, the JavaScript decoder rebuilds it). */
function journal(n: number, oldFrom = -1, oldTo = -1): Buffer {
  const rnd = prng(5);
  const bodies = Array.from({ length: 120 }, (_, k) => `body ${k} with some words `.repeat(4 + (k % 9)));
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = i >= oldFrom && i <= oldTo ? -86_400_000 * 400 + i : 1772712164469 + i * 37;
    const text = `${bodies[Math.floor(rnd() * bodies.length)]}\n${bodies[Math.floor(rnd() * bodies.length)]}`;
    lines.push(JSON.stringify({ id: `${1772712164469 + i}-z${i.toString(36)}`, timestamp: new Date(t).toISOString(), type: "tool.result", data: { i, text } }));
  }
  return Buffer.from(`${lines.join("\n")}\n`);
}

async function dieted(original: Buffer): Promise<{ exec: string; src: ExtSource }> {
  const exec = tempExec(original);
  made.push(exec);
  await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: 16 * 1024, packFrameTargetBytes: 800 });
  const l = layoutOf(exec);
  const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
  const src = ExtSource.open(l, { lines: m.ext.lines, originalBytes: m.originalBytes, endsWithNewline: m.ext.endsWithNewline }, l.dietedJournal);
  return { exec, src };
}

const wasm = threadRebuilder() !== null;

describe("extended diet: blocks handed over in the kernel's shared memory", () => {
  it.runIf(wasm)("in this thread: a kept block is a view of the shared memory at its region; a freed region is taken again; a block the kernel gives up is a buffer of its own", async () => {
    const original = journal(1200, 700, 760);
    const { src } = await dieted(original);
    try {
      expect(src.blocks.length).toBeGreaterThan(6);
      const regions: number[] = [];
      let own = 0;
      for (let k = 0; k < src.blocks.length; k++) {
        const b = src.blocks[k];
        const { data, region } = src.decodeBytes(k, undefined, true);
        expect(data.equals(original.subarray(b.originalOffset, b.originalOffset + b.originalBytes))).toBe(true);
        if (region >= 0) {
          expect(data.buffer).toBeInstanceOf(SharedArrayBuffer);
          expect(data.byteOffset).toBe(region);
          regions.push(region);
          src.freeRegion(region);
        } else {
          expect(data.buffer).not.toBeInstanceOf(SharedArrayBuffer);
          own++;
        }
      }
      // The pre-1970 lines' block went to the JavaScript decoder; every other block reused one region.
      expect(own).toBeGreaterThan(0);
      expect(regions.length).toBeGreaterThan(4);
      expect(new Set(regions).size).toBe(1);
      // Kept without being freed: each block its own region, all still holding their bytes.
      const held: { data: Buffer; region: number; k: number }[] = [];
      for (let k = 0; k < 4; k++) held.push({ ...src.decodeBytes(k, undefined, true), k });
      expect(new Set(held.map((h) => h.region)).size).toBe(4);
      for (const h of held) {
        const b = src.blocks[h.k];
        expect(h.data.equals(original.subarray(b.originalOffset, b.originalOffset + b.originalBytes))).toBe(true);
        src.freeRegion(h.region);
      }
    } finally {
      src.close();
    }
  }, 30_000);

  it("on two decode workers: shared views and transferred buffers in order, byte for byte; views not released outlive their workers; restore gives the journal back", async () => {
    const original = journal(1500, 900, 960);
    const { exec, src } = await dieted(original);
    try {
      // Released: the workers rebuild later blocks into the regions given back.
      const got: Buffer[] = [];
      let shared = 0;
      let own = 0;
      const offsets = new Set<number>();
      for await (const b of decodeBlocksOnWorkers(src, 2)) {
        got.push(Buffer.from(b.data));
        if (b.data.buffer instanceof SharedArrayBuffer) {
          shared++;
          offsets.add(b.data.byteOffset);
        } else own++;
        b.release();
      }
      expect(Buffer.concat(got).equals(original)).toBe(true);
      if (wasm) {
        expect(own).toBeGreaterThan(0);
        expect(shared).toBeGreaterThan(8);
        // At most a few regions a worker (the blocks in flight), not one a block.
        expect(offsets.size).toBeLessThan(shared / 2);
      }
      // Never released: every view keeps its bytes, also once the workers have ended.
      const kept: Buffer[] = [];
      for await (const b of decodeBlocksOnWorkers(src, 2)) kept.push(b.data);
      expect(Buffer.concat(kept).equals(original)).toBe(true);
    } finally {
      src.close();
    }
    expect((await restoreJournal(exec, { workers: 2 })).status).toBe("restored");
    expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
  }, 30_000);

  it.runIf(wasm)("in this thread for restore: blocks in order, byte for byte, in kept regions taken again once released; unreleased ones keep their bytes; restore without workers gives the journal back", async () => {
    const original = journal(1500, 900, 960);
    const { exec, src } = await dieted(original);
    try {
      const got: Buffer[] = [];
      const offsets = new Set<number>();
      let shared = 0;
      let own = 0;
      // Released one block late (as restore does once a block's write completes).
      let before: (() => void) | null = null;
      for await (const b of decodeBlocksInThread(src)) {
        got.push(Buffer.from(b.data));
        if (b.data.buffer instanceof SharedArrayBuffer) {
          shared++;
          offsets.add(b.data.byteOffset);
        } else own++;
        before?.();
        before = b.release;
      }
      before?.();
      expect(Buffer.concat(got).equals(original)).toBe(true);
      expect(own).toBeGreaterThan(0);
      expect(shared).toBeGreaterThan(8);
      // Two regions in turn (the block being used and the next), not one a block.
      expect(offsets.size).toBe(2);
      const kept: Buffer[] = [];
      for await (const b of decodeBlocksInThread(src)) kept.push(b.data);
      expect(Buffer.concat(kept).equals(original)).toBe(true);
    } finally {
      src.close();
    }
    expect((await restoreJournal(exec, { workers: 0 })).status).toBe("restored");
    expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
  }, 30_000);

  it("restore's default: this thread below EXT_RESTORE_WORKERS_MIN_BYTES, both decode workers from it", () => {
    expect(extRestoreWorkersFor(100_084_100)).toBe(0);
    expect(extRestoreWorkersFor(EXT_RESTORE_WORKERS_MIN_BYTES - 1)).toBe(0);
    expect(extRestoreWorkersFor(EXT_RESTORE_WORKERS_MIN_BYTES)).toBe(DECODE_MAX_WORKERS);
    expect(extRestoreWorkersFor(1_000_000_000)).toBe(DECODE_MAX_WORKERS);
  });

  it.runIf(wasm)("a journal ending in a torn fragment: its last block kept (in this thread and on workers) is its bytes, and restore gives it back in this thread and on workers (the kernel stopped before the torn line and wrote it over the region's start)", async () => {
    const whole = journal(600);
    const original = Buffer.concat([whole, Buffer.from('{"id":"1772712164469-zz","timestamp":"2026-03-05T12:02:44.469Z","type":"tool.result","data":{"i":1,"text":"torn')]);
    const tiny = Buffer.from('{"id":"1772712164469-01ik806e8","timestamp":"","type":"state.transition","data":false}\n{"text":"\\n\\n\\n"}');
    for (const bytes of [original, tiny]) {
      const { exec, src } = await dieted(bytes);
      try {
        const last = src.blocks.length - 1;
        const b = src.blocks[last];
        const kept = src.decodeBytes(last, undefined, true);
        expect(kept.region).toBeGreaterThanOrEqual(0);
        expect(kept.data.equals(bytes.subarray(b.originalOffset))).toBe(true);
        src.freeRegion(kept.region);
        const got: Buffer[] = [];
        for await (const d of decodeBlocksOnWorkers(src, 2)) {
          got.push(Buffer.from(d.data));
          d.release();
        }
        expect(Buffer.concat(got).equals(bytes)).toBe(true);
      } finally {
        src.close();
      }
      for (const workers of [0, 2]) {
        expect((await restoreJournal(exec, { workers })).status).toBe("restored");
        expect(fs.readFileSync(layoutOf(exec).journal).equals(bytes)).toBe(true);
        fs.rmSync(layoutOf(exec).journal);
      }
    }
  }, 30_000);
});
