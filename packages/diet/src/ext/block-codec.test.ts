import { describe, expect, it } from "vitest";
import { isJournalError } from "@hankweave-journal/core";
import { decodeBlockRange, encodeColumns, sealBlock, textStreams, unpackRecord } from "./block-codec.js";
import { FIRST_COLUMN_STREAM, FORMAT_VERSION, STREAM, STREAM_LEVEL } from "./format.js";

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
