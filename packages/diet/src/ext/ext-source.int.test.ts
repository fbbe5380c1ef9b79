import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { prng } from "@hankweave-journal/journal/testing";
import { rmExec, tempExec } from "../test-helpers.js";
import { kernelBlockCount } from "./block-codec.js";
import { applyExtDiet } from "./ext-diet.js";
import { ExtSource } from "./ext-source.js";

// Two sources in one thread share the WebAssembly rebuilder's memory: each one's pack frames come
// and go (small frame caches), so one's freed frame memory is soon the other's. A block rebuilt by
// the kernel must read only frames its source still holds.

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

async function dieted(seed: number): Promise<{ exec: string; original: Buffer }> {
  const rnd = prng(seed);
  const bodies = Array.from({ length: 120 }, (_, k) => `${seed} piece ${k} of a body `.repeat(3 + (k % 7)));
  const lines: string[] = [];
  for (let i = 0; i < 600; i++) {
    const t = 1772712164469 + i * 41;
    const text = `${bodies[Math.floor(rnd() * bodies.length)]}\n${bodies[Math.floor(rnd() * bodies.length)]}`;
    lines.push(JSON.stringify({ id: `${t}-s${i.toString(36)}`, timestamp: new Date(t).toISOString(), type: "tool.result", data: { i, text } }));
  }
  const original = Buffer.from(`${lines.join("\n")}\n`);
  const exec = tempExec(original);
  made.push(exec);
  await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: 8 * 1024, packFrameTargetBytes: 500 });
  return { exec, original };
}

function open(exec: string): ExtSource {
  const l = layoutOf(exec);
  const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
  return ExtSource.open(l, { lines: m.ext.lines, originalBytes: m.originalBytes, endsWithNewline: m.ext.endsWithNewline }, l.dietedJournal, 2000);
}

describe("extended diet source: pack frames in the rebuilder's shared memory", () => {
  it("two sources decoding whole blocks in turn, frames evicted and their memory reused by the other: byte for byte, every block by the kernel", async () => {
    const a = await dieted(1);
    const b = await dieted(2);
    const sa = open(a.exec);
    const sb = open(b.exec);
    try {
      expect(sa.frames.length).toBeGreaterThan(10);
      const rnd = prng(3);
      const before = kernelBlockCount();
      for (let n = 0; n < 60; n++) {
        const [s, o] = n % 2 === 0 ? [sa, a.original] : [sb, b.original];
        const k = Math.floor(rnd() * s.blocks.length);
        const e = s.blocks[k];
        expect(Buffer.from(s.decodeBytes(k).data).equals(o.subarray(e.originalOffset, e.originalOffset + e.originalBytes))).toBe(true);
      }
      // Every block by the kernel: none gave up on pieces that were not what their lengths say.
      expect(kernelBlockCount() - before).toBe(60);
    } finally {
      sa.close();
      sb.close();
    }
  }, 30_000);
});
