import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JournalError, isJournalError } from "@hankweave-journal/core";
import { decodeBlockRange, encodeColumns, kernelBlockCount, sealBlock, setKernelOutChunk, unpackRecord } from "./block-codec.js";
import { repackRecord, textStreams } from "./test-helpers.js";
import { FIRST_COLUMN_STREAM, FORMAT_VERSION, STREAM, STREAM_LEVEL } from "./format.js";
import { REBUILD_WASM_BASE64, threadRebuilder } from "./rebuild-wasm.js";

// A one-line read decodes only the streams of the lines asked for: the lines between the cursor
// snapshot and the line move only those streams' cursors (and T). Shown by damaging a stream that
// only the other lines use: the read still rebuilds its line, the lines that use it fail.

const LINES = 300; // snapshots before lines 128 and 256
const t0 = Date.UTC(2026, 0, 1);
const text = Array.from({ length: LINES }, (_, i) => (i % 2 === 0
  ? JSON.stringify({ id: `${t0 + i * 7}-r${i}`, timestamp: new Date(t0 + i * 7).toISOString(), type: "a", x: `x${i}` })
  : JSON.stringify({ type: "b", n: i * 3, tag: `t${i}` }))).join("\n") + "\n";
const input = Buffer.from(text);
const lines = text.split("\n").slice(0, LINES);
const c = encodeColumns(input, STREAM_LEVEL);
const record = sealBlock(c, textStreams(c.texts, { idOf: () => { throw new Error("no pieces here"); } }, c.snapTexts), STREAM_LEVEL);
const shape = { lines: LINES, originalBytes: input.length, lastUnterminated: false, version: FORMAT_VERSION };
const noPieces = () => {
  throw new Error("no pieces here");
};
const cols = JSON.parse(unpackRecord(record)[STREAM.META]?.toString("utf8").split("\n")[0] ?? "[]") as string[];

/** The record with stream `s`'s compressed bytes overwritten (same lengths: the record still parses). */
function damagedStream(s: number): Buffer {
  const r = Buffer.from(record);
  let at = 8 + 8 * r.readUInt32LE(4);
  for (let k = 0; k < s; k++) at += r.readUInt32LE(8 + 8 * k);
  r.fill(0xee, at, at + r.readUInt32LE(8 + 8 * s));
  return r;
}

function line(rec: Buffer, i: number): string {
  const d = decodeBlockRange(rec, shape, noPieces, undefined, i, i);
  return d.data.toString("utf8", d.starts[0], d.ends[0]);
}

function codeOf(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    return isJournalError(e) ? e.code : "not a JournalError";
  }
}

describe("extended diet block decoder: a range decodes only the streams of its own lines", () => {
  it("reads a line after a snapshot whose earlier lines use a damaged column, and fails on the lines that use it", () => {
    const ax = FIRST_COLUMN_STREAM + cols.findIndex((n) => n === "sa\u0000.x");
    const bn = FIRST_COLUMN_STREAM + cols.findIndex((n) => n === "nb\u0000.n");
    expect(ax).toBeGreaterThanOrEqual(FIRST_COLUMN_STREAM);
    expect(bn).toBeGreaterThanOrEqual(FIRST_COLUMN_STREAM);
    expect(line(record, 201)).toBe(lines[201]);
    expect(line(record, 200)).toBe(lines[200]);
    // Column x of type a damaged: line 201 (type b, 73 lines after the snapshot, half of them type a) still reads.
    const noAx = damagedStream(ax);
    expect(line(noAx, 201)).toBe(lines[201]);
    expect(codeOf(() => line(noAx, 200))).toBe("EXT_CORRUPT");
    expect(codeOf(() => decodeBlockRange(noAx, shape, noPieces))).toBe("EXT_CORRUPT");
    // Column n of type b damaged: line 200 (type a: its id and timestamp need T, summed over the ids before it) still reads.
    const noBn = damagedStream(bn);
    expect(line(noBn, 200)).toBe(lines[200]);
    expect(line(noBn, 298)).toBe(lines[298]);
    expect(codeOf(() => line(noBn, 201))).toBe("EXT_CORRUPT");
    // The ids damaged: a type-b line needs no T and still reads, a type-a line fails.
    const noIds = damagedStream(STREAM.ID_MS);
    expect(line(noIds, 255)).toBe(lines[255]);
    expect(codeOf(() => line(noIds, 254))).toBe("EXT_CORRUPT");
  });
});

describe("extended diet block decoder: ids and timestamps written as bytes", () => {
  it("rebuilds ids and timestamps across seconds, minutes, days, years, small and large millisecond values", () => {
    const day = Date.UTC(2026, 4, 31, 23, 59, 58, 990);
    const ms = [0, 7, 999_999, 1_000_000, 59_999, 60_000, day, day + 9, day + 1_010, day + 2_010, day + 1_000, day - 60_000, day + 60_000 * 61,
      Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2000, 0, 1), 253_402_300_799_999, 253_402_300_800_000, day + 5];
    const rows = ms.flatMap((t, i) => [
      JSON.stringify({ id: `${t}-k${i}`, timestamp: new Date(t).toISOString().length === 24 ? new Date(t).toISOString() : "x", type: "t", n: i }),
      // A timestamp far from its id (a signed offset from T), before 1970 too.
      JSON.stringify({ id: `${t}-j${i}`, timestamp: new Date(Math.max(0, t - 86_400_000 * 400) - 5_000).toISOString(), type: "t", n: -i }),
    ]);
    const raw = Buffer.from(`${rows.join("\n")}\n`);
    const cb = encodeColumns(raw, STREAM_LEVEL);
    expect(cb.encodedLines).toBe(rows.length);
    const rec = sealBlock(cb, textStreams(cb.texts, { idOf: () => 0 }, cb.snapTexts), STREAM_LEVEL);
    const sh = { lines: rows.length, originalBytes: raw.length, lastUnterminated: false, version: FORMAT_VERSION };
    expect(decodeBlockRange(rec, sh, noPieces).data.equals(raw)).toBe(true);
    for (let i = 0; i < rows.length; i++) {
      const d = decodeBlockRange(rec, sh, noPieces, undefined, i, i);
      expect(d.data.toString("utf8", d.starts[0], d.ends[0])).toBe(rows[i]);
    }
  });
});

describe("extended diet block decoder: the WebAssembly rebuild kernel", () => {
  it("is the assembly of rebuild.wat (run `node tools/build-wasm.mjs rebuild` after editing the .wat)", async () => {
    const { assembleWasm } = await import("../../../../tools/build-wasm.mjs");
    const wat = readFileSync(fileURLToPath(new URL("./rebuild.wat", import.meta.url)), "utf8");
    expect((await assembleWasm("rebuild", wat)).toString("base64")).toBe(REBUILD_WASM_BASE64);
  });

  // A block of every hole kind (pieces in the kernel's memory, as a source that decodes whole blocks keeps them), then
  // the same block with one decoded stream damaged: the kernel gives the JavaScript decoder's bytes or its exact error.
  const w = threadRebuilder();
  const pieceText: string[] = [];
  const pieceAt: number[] = [];
  const ids = new Map<string, number>();
  const store = {
    idOf(p: string): number {
      let id = ids.get(p);
      if (id === undefined) {
        id = pieceText.length;
        ids.set(p, id);
        pieceText.push(p);
        const b = Buffer.from(p);
        const a = (w as NonNullable<typeof w>).alloc(b.length + 16);
        (w as NonNullable<typeof w>).u8.set(b, a);
        pieceAt.push(a);
      }
      return id;
    },
  };
  const inKernel = (id: number) => {
    if (!(id >= 0 && id < pieceText.length)) throw new JournalError("EXT_INDEX_INVALID", `piece ${id} is not in the pack`);
    const buf = (w as NonNullable<typeof w>).buf;
    return { buf, start: pieceAt[id], end: pieceAt[id] + Buffer.byteLength(pieceText[id]) };
  };
  const long = fc.stringMatching(/^[a-z0-9 é]{16,40}$/);
  const lineArb = fc.oneof(
    fc.record({ t: fc.integer({ min: 0, max: 4e12 }), r: fc.stringMatching(/^[0-9a-z]{0,8}$/), n: fc.integer(), f: fc.double({ noNaN: true, noDefaultInfinity: true }), s: fc.string({ maxLength: 20 }) })
      .map(({ t, r, n, f, s }) => JSON.stringify({ id: `${t}-${r}`, timestamp: new Date(t + 1234).toISOString(), type: "x", n, f, s })),
    fc.array(fc.oneof(long, fc.string({ maxLength: 12 })), { minLength: 2, maxLength: 6 })
      .map((ps) => JSON.stringify({ type: "y", body: `${ps.join("\n")}${"z".repeat(32)}`, k: ps.length })),
    fc.constantFrom('{"a": 1}', "not json", "", '{"type":"x","n":1e5}'),
  );
  const blockArb = fc.tuple(fc.array(lineArb, { minLength: 1, maxLength: 300 }), fc.boolean());

  function encode(lines: string[], tornAsked: boolean) {
    // An empty last line cannot be a torn fragment (there would be no line at all).
    const torn = tornAsked && lines[lines.length - 1] !== "";
    const raw = Buffer.from(lines.join("\n") + (torn ? "" : "\n"));
    const cb = encodeColumns(raw, 1);
    const rec = sealBlock(cb, textStreams(cb.texts, store, cb.snapTexts), 1);
    return { raw, rec, sh: { lines: lines.length, originalBytes: raw.length, lastUnterminated: torn, version: FORMAT_VERSION } };
  }
  function outcome(rec: Buffer, sh: typeof shape, js: boolean): string {
    try {
      return decodeBlockRange(rec, sh, inKernel, undefined, 0, sh.lines - 1, { js }).data.toString("latin1");
    } catch (e) {
      return isJournalError(e) ? `${e.code}: ${e.message}` : `not a JournalError: ${String(e)}`;
    }
  }

  it.runIf(w !== null)("rebuilds whole blocks byte for byte, and on a damaged stream gives the JavaScript decoder's bytes or its error", () => {
    fc.assert(
      fc.property(blockArb, fc.nat(), fc.nat(), fc.constantFrom(..."0123456789-\n'\"x"), fc.nat(2), fc.integer({ min: 1, max: 3000 }), ([lines, torn], sPick, at, ch, op, chunk) => {
        const { raw, rec, sh } = encode(lines, torn);
        const before = kernelBlockCount();
        // Output regions from 1 byte (one line per call) to more than the block: the cursors carry over between calls.
        const was = setKernelOutChunk(chunk);
        try {
          expect(decodeBlockRange(rec, sh, inKernel).data.equals(raw)).toBe(true);
        } finally {
          setKernelOutChunk(was);
        }
        // Lines far outside 1970-9999 never occur here: every intact block is the kernel's.
        expect(kernelBlockCount()).toBe(before + 1);
        const n = (unpackRecord(rec) as Buffer[]).length;
        const s = 1 + (sPick % (n - 1));
        const bad = repackRecord(rec, s, (b) => {
          if (b.length === 0) return Buffer.from(ch);
          const i = at % b.length;
          if (op === 0) b[i] = ch.charCodeAt(0);
          return op === 0 ? b : op === 1 ? Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]) : Buffer.concat([b.subarray(0, i), Buffer.from(ch), b.subarray(i)]);
        });
        expect(outcome(bad, sh, false)).toBe(outcome(bad, sh, true));
      }),
      { numRuns: 150 },
    );
  });

  it.runIf(w !== null)("leaves timestamps before 1970 and pieces outside its memory to the JavaScript decoder (same bytes)", () => {
    const rows = [JSON.stringify({ id: "5-a", timestamp: new Date(-86_400_000 * 3).toISOString(), type: "t" }), JSON.stringify({ type: "y", body: `${"q".repeat(40)}\n${"r".repeat(20)}` })];
    const { raw, rec, sh } = encode(rows, false);
    const before = kernelBlockCount();
    expect(decodeBlockRange(rec, sh, inKernel).data.equals(raw)).toBe(true);
    expect(kernelBlockCount()).toBe(before);
    const { raw: raw2, rec: rec2, sh: sh2 } = encode([rows[1]], false);
    const elsewhere = (id: number) => {
      const b = Buffer.from(pieceText[id]);
      return { buf: b, start: 0, end: b.length };
    };
    expect(decodeBlockRange(rec2, sh2, elsewhere).data.equals(raw2)).toBe(true);
    expect(kernelBlockCount()).toBe(before);
    expect(decodeBlockRange(rec2, sh2, inKernel).data.equals(raw2)).toBe(true);
    expect(kernelBlockCount()).toBe(before + 1);
  });
});
