import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isJournalError } from "@hankweave-journal/core";
import { decodeBlockRange, encodeColumns, parsedShapeLine, sealBlock } from "./block-codec.js";
import { FORMAT_VERSION, STREAM, STREAM_LEVEL } from "./format.js";
import { repackRecord, textStreams } from "./test-helpers.js";

// A version 3 shape line read from its bytes must be what the JSON path makes of it: the template's
// UTF-8 (Buffer.from(JSON.parse(line)[0])), its holes (the characters 1-5) and the segments
// around them, and the columns; or null, and the JSON path reads it (and reports what is wrong).

/** The JSON path: holes, bytes and segments as Meta.use and Meta.segsOf compute them. */
function viaJson(line: string): { kinds: number[]; bytes: Buffer; segs: number[]; cols: number[] } {
  const [tpl, cols] = JSON.parse(line) as [string, number[]];
  const bytes = Buffer.from(tpl, "utf8");
  const kinds: number[] = [];
  const segs: number[] = [];
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] >= 1 && bytes[i] <= 5) {
      kinds.push(bytes[i]);
      segs.push(from, i);
      from = i + 1;
    }
  }
  segs.push(from, bytes.length);
  return { kinds, bytes, segs, cols };
}

function fast(b: Buffer) {
  const p = parsedShapeLine(b, 0, b.length);
  return p === null ? null : { kinds: [...p.tpl.kinds], bytes: Buffer.from(p.tpl.bytes), segs: [...p.tpl.segs], cols: p.cols, strNum: p.tpl.strNum };
}

const tplArb = fc.array(fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 8 }),
  fc.string({ unit: "binary", maxLength: 4 }),
  fc.constantFrom("\u0001", "\u0002", "\u0003", "\u0004", "\u0005", "\u0000", "\u001f", "\"", "\\", "/", "\n", "\t", "\u007f", "é", "😀", "\u2028", "\ud800", "\\u0001"),
), { maxLength: 30 }).map((p) => p.join(""));
const colsArb = fc.array(fc.oneof(fc.nat({ max: 99 }), fc.nat({ max: 999_999_999 })), { maxLength: 12 });

describe("extended diet block decoder: a shape line read from its bytes", () => {
  it("gives the JSON path's template bytes, holes, segments and columns for every line the writer makes (null only for a \\u escape above 0x7f)", () => {
    fc.assert(fc.property(tplArb, colsArb, (tpl, cols) => {
      const line = JSON.stringify([tpl, cols]);
      const got = fast(Buffer.from(line));
      if (got === null) {
        // JSON.stringify escapes only lone surrogates above 0x7f.
        expect(line).toMatch(/\\ud[89a-f]/);
        return;
      }
      const want = viaJson(line);
      expect(got.bytes.equals(want.bytes)).toBe(true);
      expect(got.kinds).toEqual(want.kinds);
      expect(got.segs).toEqual(want.segs);
      expect(got.cols).toEqual(want.cols);
      expect(got.strNum).toBe(want.kinds.filter((k) => k <= 2).length);
    }), { numRuns: 2000 });
  });

  it("accepts an edited line only when JSON.parse reads it to the same template and columns", () => {
    const edit = fc.tuple(tplArb, colsArb, fc.nat(), fc.nat(2), fc.constantFrom(..." ,[]\"\\u0012359eE.-+\u00e9", "\x00", "\x1f", "\x80", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80"));
    fc.assert(fc.property(edit, ([tpl, cols, at, op, ch]) => {
      const b = Buffer.from(JSON.stringify([tpl, cols]));
      const i = at % (b.length + 1);
      const c = Buffer.from(ch, "latin1");
      const e = op === 0 ? Buffer.concat([b.subarray(0, i), c, b.subarray(i + 1)]) : op === 1 ? Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]) : Buffer.concat([b.subarray(0, i), c, b.subarray(i)]);
      const got = fast(e);
      if (got === null) return;
      // Accepted: the JSON path reads the same line (as the decoder would: UTF-8) to the same values.
      const want = viaJson(e.toString("utf8"));
      expect(got.bytes.equals(want.bytes)).toBe(true);
      expect(got.kinds).toEqual(want.kinds);
      expect(got.segs).toEqual(want.segs);
      expect(got.cols).toEqual(want.cols);
    }), { numRuns: 5000 });
  });

  it("leaves spaces, non-canonical numbers, bad escapes and malformed UTF-8 to the JSON path", () => {
    const cases = ['[ "a\\u0001b",[0]]', '["a\\u0001b", [0]]', '["a\\u0001b",[0] ]', '["a\\u0001b",[01]]', '["a\\u0001b",[1.0]]', '["a\\u0001b",[-1]]',
      '["a\\u0001b",[1,]]', '["a\\u0001b",[,1]]', '["a\\u0001b",[1e2]]', '["a\\x",[0]]', '["a\\u00e9",[]]', '["a\\u12",[]]', '["a"b",[]]', '["a\\",[]]', '"a",[]]', '["a",[1234567890]]'];
    for (const c of cases) expect(fast(Buffer.from(c))).toBeNull();
    expect(fast(Buffer.from([0x5b, 0x22, 0x61, 0xc3, 0x22, 0x2c, 0x5b, 0x5d, 0x5d]))).toBeNull();
    expect(fast(Buffer.from([0x5b, 0x22, 0x61, 0x09, 0x22, 0x2c, 0x5b, 0x5d, 0x5d]))).toBeNull();
    // The same lines the writer makes are read.
    expect(fast(Buffer.from('["a\\u0001b\\u0005",[7]]'))).toEqual({ kinds: [1, 5], bytes: Buffer.from("a\u0001b\u0005"), segs: [0, 1, 2, 3, 4, 4], cols: [7], strNum: 1 });
    expect(fast(Buffer.from('["",[]]'))).toEqual({ kinds: [], bytes: Buffer.alloc(0), segs: [0, 0], cols: [], strNum: 0 });
  });
});

describe("extended diet block decoder: shape lines the byte reader leaves to JSON", () => {
  const t0 = Date.UTC(2026, 4, 1);
  const rows = Array.from({ length: 200 }, (_, i) => (i % 2 === 0
    ? JSON.stringify({ id: `${t0 + i}-z${i}`, timestamp: new Date(t0 + i).toISOString(), type: "a", "k\u00e9\"y": `v${i}`, n: i })
    : JSON.stringify({ type: "b", m: i, tag: `t${i % 5}` })));
  const raw = Buffer.from(`${rows.join("\n")}\n`);
  const c = encodeColumns(raw, STREAM_LEVEL);
  const record = sealBlock(c, textStreams(c.texts, { idOf: () => { throw new Error("no pieces here"); } }, c.snapTexts), STREAM_LEVEL);
  const shape = { lines: rows.length, originalBytes: raw.length, lastUnterminated: false, version: FORMAT_VERSION };
  const noPieces = () => {
    throw new Error("no pieces here");
  };
  /** The record with its META lines (after the column names) rewritten by `edit`. */
  function withMeta(edit: (line: string) => string): Buffer {
    return repackRecord(record, STREAM.META, (meta) => {
      const lines = meta.toString("utf8").split("\n");
      for (let i = 1; i < lines.length - 1; i++) lines[i] = edit(lines[i]);
      return Buffer.from(lines.join("\n"));
    });
  }
  function outcome(rec: Buffer, js: boolean, from = 0, to = rows.length - 1): string {
    try {
      const d = decodeBlockRange(rec, shape, noPieces, undefined, from, to, { js });
      return d.data.toString("latin1", d.starts[0], d.ends[d.ends.length - 1]);
    } catch (e) {
      return isJournalError(e) ? `${e.code}: ${e.message}` : `not a JournalError: ${String(e)}`;
    }
  }

  it("rebuilds the same bytes from shape lines with spaces (the JSON path), whole and line by line", () => {
    const spaced = withMeta((l) => l.replace(/,\[/g, ", [").replace(/^\[/, "[ "));
    const whole = raw.toString("latin1", 0, raw.length - 1);
    expect(outcome(record, false)).toBe(whole);
    expect(outcome(spaced, false)).toBe(whole);
    expect(outcome(spaced, true)).toBe(whole);
    for (const i of [0, 1, 150, 199]) expect(outcome(spaced, true, i, i)).toBe(Buffer.from(rows[i]).toString("latin1"));
  });

  it("reports a shape line that is not JSON, or names too few columns, as the JSON path does", () => {
    const leadingZero = withMeta((l) => l.replace(/,\[(\d)/, ",[0$1"));
    expect(outcome(leadingZero, false)).toMatch(/^EXT_CORRUPT: .*its shape table is not JSON/);
    expect(outcome(leadingZero, true)).toBe(outcome(leadingZero, false));
    const fewer = withMeta((l) => l.replace(/,\[\d+,?/, ",["));
    expect(outcome(fewer, false)).toMatch(/^EXT_CORRUPT: .*lists \d+ columns for its \d+ holes/);
    expect(outcome(fewer, true)).toBe(outcome(fewer, false));
  });
});
