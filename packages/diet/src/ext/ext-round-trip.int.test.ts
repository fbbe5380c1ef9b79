import * as fs from "node:fs";
import * as path from "node:path";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "../open-reader.js";
import { restoreJournal } from "../restore.js";
import { verifyDiet } from "../verify-diet.js";
import { journalArb } from "../journal-arbitrary.js";
import { copyExec, linesToBytes, rmExec, tempExec } from "../test-helpers.js";
import { prng } from "@hankweave-journal/journal/testing";
import { applyExtDiet } from "./ext-diet.js";
import { writeExtContainer } from "./ext-write.js";
import { independentDecode } from "./independent-decoder.js";
import { ExtSource } from "./ext-source.js";
import { DecodeCrew, decodeBlocksOnWorkers } from "./decode-pool.js";

// Round trips of the extended diet: through the independent decoder written from
// docs/extended-diet.md, through openReader (the production decoder) and through restore.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

/** Diet `exec` extended, then check all three decoders against `original`; returns the verbatim line numbers. */
async function roundTrip(exec: string, original: Buffer, opts: { blockTargetBytes?: number; packFrameTargetBytes?: number; workers?: number } = {}): Promise<number[]> {
  const l = layoutOf(exec);
  const r = await applyExtDiet(exec, { force: true, workers: 0, ...opts });
  expect(r.dietVersion).toBe(2);
  expect(r.originalBytes).toBe(original.length);
  expect(fs.existsSync(l.journal)).toBe(false);
  const manifest = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
  expect(manifest.dietVersion).toBe(2);
  expect(manifest.ext.format).toBe("hwx-columnar");
  const verbatim: number[] = [];
  const independent = await independentDecode(fs.readFileSync(l.dietedJournal), manifest, verbatim);
  expect(independent.equals(original)).toBe(true);
  const reader = await openReader(exec);
  try {
    expect(reader.kind).toBe("dieted");
    expect((await linesToBytes(reader)).equals(original)).toBe(true);
  } finally {
    await reader.close();
  }
  expect((await verifyDiet(exec)).originalBytes).toBe(original.length);
  expect((await restoreJournal(exec)).status).toBe("restored");
  expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
  return verbatim;
}

const confJournals = fs.existsSync(CONF)
  ? fs.readdirSync(CONF).map((d) => path.join(CONF, d)).filter((d) => fs.existsSync(layoutOf(d).journal))
  : [];

if (confJournals.length === 0) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(confJournals.length).toBe(0);
  });
}

describe.runIf(confJournals.length > 0)("extended diet of every conformance journal", () => {
  for (const src of confJournals) {
    it(`${path.basename(src)}: byte for byte through the independent decoder, the reader and restore`, async () => {
      const exec = copyExec(src);
      made.push(exec);
      const original = fs.readFileSync(layoutOf(exec).journal);
      // Small blocks and pack frames so that the journal spans several of each.
      const verbatim = await roundTrip(exec, original, { blockTargetBytes: 256 * 1024, packFrameTargetBytes: 64 * 1024 });
      // The runtime's lines are JSON.stringify output: all of them are encoded.
      const lines = original.toString("utf8").split("\n").filter((x) => x.length > 0).length;
      expect(verbatim.length).toBeLessThan(Math.max(1, lines / 100));
    }, 60_000);
  }
});

/** Lines whose re-serialisation differs from their bytes: they must stay verbatim. */
const MUST_STAY = [
  '{"id":"1772712164469-01ik806e8","n":1e5}', '{"n":-0}', '{"n":1.0}', '{"n":1E2}', '{"a":1,"a":2}',
  '{"b":1,"1":2}', '{ "a":1}', '{"a":1} ', '{"s":"\\/"}', '{"s":"\\u00e9"}', '{"s":"\\ud800"x}', '[1,2]', '"str"', '12', 'null',
  '{"timestamp":"2026-03-05T12:02:44.469Z","n":0.10}', '{"a":"\\u0041"}', '{"big":123456789012345678901}',
];
const event = fc.record({
  id: fc.oneof(fc.constant("1772712164469-01ik806e8"), fc.string(), fc.constant("0-"), fc.constant("01-x")),
  timestamp: fc.oneof(fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()), fc.string()),
  type: fc.constantFrom("state.transition", "tool.result", "assistant.action", "weird\u0001type", "__proto__"),
  data: fc.jsonValue(),
}).map((e) => JSON.stringify(e));
const lineArb = fc.oneof(
  { arbitrary: fc.constantFrom(...MUST_STAY).map((s) => ({ s: Buffer.from(s), keep: true })), weight: 2 },
  { arbitrary: event.map((s) => ({ s: Buffer.from(s), keep: false })), weight: 4 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 300 }).map((t) => ({ s: Buffer.from(JSON.stringify({ text: `${t}\n${t}`.repeat(3) })), keep: false })), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => ({ s: Buffer.from(b.filter((x) => x !== 10)), keep: false })), weight: 1 },
  { arbitrary: fc.constant({ s: Buffer.alloc(0), keep: true }), weight: 1 },
);
const hostileJournal = fc.record({ lines: fc.array(lineArb, { maxLength: 40 }), torn: fc.boolean() }).map(({ lines, torn }) => {
  const parts = lines.map((l) => l.s);
  const bytes = Buffer.concat(parts.flatMap((p, i) => (torn && i === parts.length - 1 ? [p] : [p, Buffer.from("\n")])));
  // An empty torn fragment is no line at all.
  const keep = lines.map((l, i) => l.keep || (torn && i === lines.length - 1));
  if (torn && parts.length > 0 && parts[parts.length - 1].length === 0) keep.pop();
  return { bytes, keep };
});

describe("extended diet of hostile journals (property)", () => {
  it("non-canonical lines, odd keys, invalid UTF-8, blank lines and a torn fragment: verbatim where re-serialising differs, byte for byte everywhere", async () => {
    await fc.assert(
      fc.asyncProperty(hostileJournal, fc.constantFrom(64, 500, 1 << 20), fc.constantFrom(32, 4096), async (j, blockTargetBytes, packFrameTargetBytes) => {
        const exec = tempExec(j.bytes);
        made.push(exec);
        const verbatim = new Set(await roundTrip(exec, j.bytes, { blockTargetBytes, packFrameTargetBytes }));
        j.keep.forEach((keep, i) => {
          if (keep) expect(verbatim.has(i), `line ${i} must stay verbatim`).toBe(true);
        });
        rmExec(exec);
      }),
      { numRuns: 15 },
    );
  }, 90_000);

  it("the diet property journals (bodies at the 4 KB threshold, duplicate bodies, lone surrogates, escapes) round-trip", async () => {
    await fc.assert(
      fc.asyncProperty(journalArb, fc.constantFrom(200, 1 << 20), async (j, blockTargetBytes) => {
        const exec = tempExec(j.bytes);
        made.push(exec);
        const verbatim = new Set(await roundTrip(exec, j.bytes, { blockTargetBytes, packFrameTargetBytes: 8192 }));
        j.lines.forEach((x, i) => {
          if (x.compatible === "keep" && x.extended === "keep" && x.bytes.length > 0) expect(typeof verbatim.has(i)).toBe("boolean");
        });
        rmExec(exec);
      }),
      { numRuns: 8 },
    );
  }, 90_000);
});

describe("extended diet: reads that start at a cursor snapshot, and the pack's reference window", () => {
  it("any line range of blocks holding many snapshots reads back byte for byte, with a small reference window", async () => {
    // ~900 lines in two blocks (snapshots every 128 lines), mixing verbatim lines, ids,
    // timestamps, numbers, short strings and text that repeats near and far (the 600-byte window
    // makes far repeats new pieces).
    const rnd = prng(7);
    const bodies = Array.from({ length: 40 }, (_, k) => `body ${k} `.repeat(4 + (k % 7)));
    const lines: string[] = [];
    for (let i = 0; i < 900; i++) {
      const t = 1772712164469 + i * 37;
      const r = rnd();
      if (r < 0.05) lines.push(`{"n":1e5,"i":${i}}`);
      else if (r < 0.08) lines.push("");
      else {
        const text = `${bodies[Math.floor(rnd() * bodies.length)]}\n${bodies[Math.floor(rnd() * bodies.length)]}`;
        lines.push(JSON.stringify({ id: `${t}-x${i.toString(36)}`, timestamp: new Date(t).toISOString(), type: r < 0.5 ? "tool.result" : "token.usage", data: { i, s: `s${i % 9}`, text, ok: r < 0.7 } }));
      }
    }
    const original = Buffer.from(`${lines.join("\n")}\n`);
    const exec = tempExec(original);
    made.push(exec);
    await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: original.length / 2, packFrameTargetBytes: 512, packWindowBytes: 600 });
    const l = layoutOf(exec);
    const manifest = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    expect(manifest.ext.blocks).toBe(2);
    expect(manifest.ext.version).toBe(3);
    // The window stores far repeats again: more unique pieces than distinct texts.
    expect(manifest.ext.text.unique).toBeGreaterThan(bodies.length);
    expect((await independentDecode(fs.readFileSync(l.dietedJournal), manifest)).equals(original)).toBe(true);
    const reader = await openReader(exec);
    try {
      for (let k = 0; k < 60; k++) {
        const from = Math.floor(rnd() * lines.length);
        const to = Math.min(lines.length - 1, from + Math.floor(rnd() * (k % 3 === 0 ? 300 : 3)));
        const got: string[] = [];
        for await (const raw of reader.lines({ fromLine: from, toLine: to })) got.push(raw.bytes.toString("utf8"));
        expect(got).toEqual(lines.slice(from, to + 1));
        const rec = await reader.getLine(from);
        if (lines[from].startsWith('{"id"')) expect(rec?.bytes.toString("utf8")).toBe(lines[from]);
      }
    } finally {
      await reader.close();
    }
    expect((await restoreJournal(exec)).status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
  }, 30_000);
});

describe("extended diet: decoding with reused memory", () => {
  it("restore on two decode workers (block buffers given back and reused) and a frame cache small enough to evict and reuse frames: byte for byte", async () => {
    const rnd = prng(11);
    const bodies = Array.from({ length: 200 }, (_, k) => `piece ${k} of a body `.repeat(3 + (k % 11)));
    const lines: string[] = [];
    for (let i = 0; i < 1500; i++) {
      const t = 1772712164469 + i * 41;
      const text = `${bodies[Math.floor(rnd() * bodies.length)]}\n${bodies[Math.floor(rnd() * bodies.length)]}`;
      lines.push(i % 97 === 5 ? `{"n":1e5,"i":${i}}` : JSON.stringify({ id: `${t}-y${i.toString(36)}`, timestamp: new Date(t).toISOString(), type: "tool.result", data: { i, text } }));
    }
    const original = Buffer.from(`${lines.join("\n")}\n`);
    const exec = tempExec(original);
    made.push(exec);
    await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: 16 * 1024, packFrameTargetBytes: 600 });
    const l = layoutOf(exec);
    const manifest = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    expect(manifest.ext.blocks).toBeGreaterThan(12);
    // In this thread with a 3 KB frame cache: frames are evicted and their buffers reused, in order and out of order.
    const src = ExtSource.open(l, { lines: manifest.ext.lines, originalBytes: manifest.originalBytes, endsWithNewline: manifest.ext.endsWithNewline }, l.dietedJournal, 3000);
    try {
      expect(src.frames.length).toBeGreaterThan(20);
      const parts: Buffer[] = [];
      for (let k = 0; k < src.blocks.length; k++) parts.push(Buffer.from(src.decodeBytes(k).data));
      expect(Buffer.concat(parts).equals(original)).toBe(true);
      for (let n = 0; n < 20; n++) {
        const k = Math.floor(rnd() * src.blocks.length);
        const b = src.blocks[k];
        expect(Buffer.from(src.decodeBytes(k).data).equals(original.subarray(b.originalOffset, b.originalOffset + b.originalBytes))).toBe(true);
      }
      // Decode workers started before they are given the container: one taken, the other ended.
      const crew = new DecodeCrew(2);
      const got: Buffer[] = [];
      for await (const b of decodeBlocksOnWorkers(src, 1, crew)) {
        got.push(Buffer.from(b.data));
        b.release();
      }
      expect(crew.size).toBe(0);
      expect(Buffer.concat(got).equals(original)).toBe(true);
    } finally {
      src.close();
    }
    expect((await restoreJournal(exec, { workers: 2 })).status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
  }, 30_000);
});

describe("extended diet: the same container wherever the block work runs", () => {
  it("on two workers (pieces deduplicated by bytes and a random hash seed), the container is byte for byte the one main's single-thread writer made", async () => {
    const rnd = prng(23);
    const bodies = Array.from({ length: 300 }, (_, k) => `line ${k} of a file — ${"é".repeat(k % 3)}\n`.repeat(2 + (k % 13)));
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const t = 1772712164469 + i * 53;
      const r = rnd();
      if (r < 0.03) lines.push(`{"n":1e5,"i":${i}}`);
      else if (r < 0.05) lines.push("");
      else {
        const text = `${bodies[Math.floor(rnd() * rnd() * bodies.length)]}"quoted" \\ tab\t${bodies[Math.floor(rnd() * bodies.length)]}`;
        lines.push(JSON.stringify({ id: `${t}-z${i.toString(36)}`, timestamp: new Date(t).toISOString(), type: r < 0.6 ? "tool.result" : "assistant.action", data: { i, s: `s${i % 7}`, text, ok: r < 0.8 } }));
      }
    }
    const original = Buffer.from(`${lines.join("\n")}\n{"torn":`);
    const exec = tempExec(original);
    made.push(exec);
    const l = layoutOf(exec);
    // The writer alone (the diet around it would start two more workers to verify): 25 blocks of
    // 64 KiB, a window of 50 KB (far repeats stored again), frames of 4 KB.
    const src = await fs.promises.open(l.journal, "r");
    const out = await fs.promises.open(l.dietedJournalTmp, "w");
    let w: Awaited<ReturnType<typeof writeExtContainer>>;
    try {
      w = await writeExtContainer(src, original.length, out, { workers: 2, blockTargetBytes: 64 * 1024, packFrameTargetBytes: 4096, packWindowBytes: 50_000 });
    } finally {
      await src.close();
      await out.close();
    }
    const container = fs.readFileSync(l.dietedJournalTmp);
    // The sha256 of what main's writer at 65bc1c8 (string-keyed pack, one thread) made of this
    // input with these options: a faster writer must not change a byte. A format change updates it on purpose.
    expect(createHash("sha256").update(container).digest("hex")).toBe("8b2918e783e3cbce8d6b51e672976389c255314e01321c84317827f1e2156aad");
    expect(w.blocks).toBeGreaterThan(20);
    expect(w.originalBytes).toBe(original.length);
    const manifest = { ext: { lines: w.lines, endsWithNewline: w.endsWithNewline } };
    expect((await independentDecode(container, manifest as Parameters<typeof independentDecode>[1])).equals(original)).toBe(true);
  }, 30_000);
});
