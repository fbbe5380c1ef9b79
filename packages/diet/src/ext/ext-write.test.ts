import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { prng } from "@hankweave-journal/journal/testing";
import { Pack } from "./ext-write.js";
import { decodeBlockRange, encodeColumns, sealBlock, sealWithIds, textStreamsOf, unpackRecord } from "./block-codec.js";
import { longPieces, textStreams } from "./test-helpers.js";
import { FORMAT_VERSION, PIECE_MIN_CHARS, STREAM } from "./format.js";

/** The pack's id assignment as it was written with string keys (before pieces came as bytes with hashes). */
function referenceIds(pieces: string[], window: number, frameTarget: number): { ids: number[]; frames: string[] } {
  const ids = new Map<string, { id: number; at: number }>();
  const inWindow: { piece: string; id: number; at: number }[] = [];
  let head = 0;
  let pending: string[] = [];
  let pendingBytes = 0;
  let nextId = 0;
  let poolBytes = 0;
  const out: number[] = [];
  const frames: string[] = [];
  for (const piece of pieces) {
    const known = ids.get(piece);
    if (known !== undefined && poolBytes - known.at <= window) {
      out.push(known.id);
      continue;
    }
    const e = { id: nextId++, at: poolBytes };
    ids.set(piece, e);
    inWindow.push({ piece, ...e });
    const bytes = Buffer.byteLength(piece) + 1;
    poolBytes += bytes;
    pending.push(piece);
    pendingBytes += bytes;
    if (pendingBytes >= frameTarget) {
      frames.push(`${pending.join("\n")}\n`);
      pending = [];
      pendingBytes = 0;
    }
    while (head < inWindow.length && poolBytes - inWindow[head].at > window) {
      const old = inWindow[head++];
      if (ids.get(old.piece)?.id === old.id) ids.delete(old.piece);
    }
    out.push(e.id);
  }
  if (pending.length > 0) frames.push(`${pending.join("\n")}\n`);
  return { ids: out, frames };
}

describe("the pack's dedupe by bytes and hash", () => {
  it("assigns the ids and fills the frames the string-keyed pack did, even when every hash collides", () => {
    const rnd = prng(5);
    const vocab = Array.from({ length: 400 }, (_, k) => `piece ${k} ${"é—".repeat(k % 4)}${"x".repeat(k % 50)}`);
    const pieces = Array.from({ length: 6000 }, () => vocab[Math.floor(rnd() * rnd() * vocab.length)]);
    for (const [window, frameTarget] of [[3000, 700], [1 << 20, 4096], [200, 64]]) {
      const want = referenceIds(pieces, window, frameTarget);
      for (const hashOf of [(k: number) => k % 7, () => 0]) {
        const pack = new Pack(window, frameTarget);
        const got: number[] = [];
        const frames: string[] = [];
        // Pieces arrive in blocks of 500, each block one buffer (as from a column worker).
        for (let b = 0; b < pieces.length; b += 500) {
          const block = pieces.slice(b, b + 500);
          const buf = Buffer.from(`${block.join("\n")}\n`);
          let start = 0;
          block.forEach((p) => {
            const end = start + Buffer.byteLength(p);
            got.push(pack.idOf(hashOf(vocab.indexOf(p)), buf, start, end));
            start = end + 1;
          });
          for (const f of pack.full.splice(0)) frames.push(f.raw.toString("utf8"));
        }
        if (pack.pending.length > 0) frames.push(pack.take().raw.toString("utf8"));
        expect(got).toEqual(want.ids);
        expect(frames).toEqual(want.frames);
      }
    }
  });
});

describe("a block's long pieces, found in its texts' bytes", () => {
  it("are the pieces split(\"\\\\n\") gives of PIECE_MIN_CHARS or more UTF-16 units, in order, with equal bytes hashing equal", () => {
    const rnd = prng(9);
    // Escaped content as the encoder holds it: `\\n` escapes, escaped backslashes before an n,
    // multi-byte characters (2, 3 and 4 bytes: a 15-unit piece can be 16 bytes or more).
    const parts = ["\\n", "\\\\n", "\\\\", "n", "é", "—", "😀", "abc", "x".repeat(13), "y".repeat(16), "z".repeat(40), "\\u0001", "\\\""];
    const texts = Array.from({ length: 400 }, () => {
      let t = "";
      while (t.length < 32 || rnd() < 0.8) t += parts[Math.floor(rnd() * parts.length)];
      return t;
    });
    const want = texts.flatMap((t) => t.split("\\n")).filter((p) => p.length >= PIECE_MIN_CHARS);
    const got = longPieces(texts, 77);
    expect(got.ends.length).toBe(want.length);
    const seen = new Map<string, number>();
    for (let k = 0; k < want.length; k++) {
      expect(got.bytes.toString("utf8", got.starts[k], got.ends[k])).toBe(want[k]);
      const h = seen.get(want[k]);
      if (h !== undefined) expect(got.hashes[k]).toBe(h);
      seen.set(want[k], got.hashes[k]);
    }
    // The text streams written from the bytes are the ones written from the strings (ids repeat for repeated pieces).
    const ids = want.map((p) => [...new Set(want)].indexOf(p));
    let k = 0;
    const snaps = [0, 3, 3, 250, 400];
    const fromStrings = textStreams(texts, { idOf: () => ids[k++] }, snaps);
    const ends: number[] = [];
    const bytes = Buffer.from(texts.join(""), "utf8");
    let at = 0;
    for (const t of texts) ends.push((at += Buffer.byteLength(t)));
    const fromBytes = textStreamsOf(bytes, ends, ids, snaps);
    expect(Buffer.from(fromBytes.text).equals(fromStrings.text)).toBe(true);
    expect(fromBytes.textn.equals(fromStrings.textn)).toBe(true);
    expect([fromBytes.refs, fromBytes.snapText, fromBytes.snapTextN, fromBytes.snapPrev]).toEqual([fromStrings.refs, fromStrings.snapText, fromStrings.snapTextN, fromStrings.snapPrev]);
    // A `\` ending a value does not pair with the next value's `n`; `\\n` splits after its first backslash, as split does.
    const cross = [`${"a".repeat(20)}\\`, `n${"b".repeat(20)}`, `${"c".repeat(17)}\\\\n${"d".repeat(16)}`, `${"e".repeat(16)}\\n`];
    const crossWant = cross.flatMap((t) => t.split("\\n")).filter((p) => p.length >= PIECE_MIN_CHARS);
    const crossGot = longPieces(cross, 3);
    expect([...crossGot.ends].map((e, k) => crossGot.bytes.toString("utf8", crossGot.starts[k], e))).toEqual(crossWant);
    expect(crossWant).toEqual([`${"a".repeat(20)}\\`, `n${"b".repeat(20)}`, `${"c".repeat(17)}\\`, "d".repeat(16), "e".repeat(16)]);
    // Pieces of exactly 15 units in more than 15 bytes stay inline; of 16 units, long.
    const edge = longPieces([`${"é".repeat(15)}\\n${"é".repeat(16)}\\n${"😀".repeat(8)}`], 1);
    expect([...edge.ends].map((e, k) => edge.bytes.toString("utf8", edge.starts[k], e))).toEqual(["é".repeat(16), "😀".repeat(8)]);
  });
});

// The walk is the invertibility proof (block-codec.ts, `Encoder.event`): a line gets a shape
// exactly when `JSON.stringify(JSON.parse(line)) === line` (the proof it replaced, the oracle
// here), and the block decodes to its bytes. The lines come from a serialiser that, token by
// token, may write what JSON.parse reads the same (or not) but JSON.stringify would not write:
// whitespace, other escapes (`\/`, `\u0041`, `\u000a`, uppercase hex, escaped surrogate pairs,
// `\u2028`), other number forms (`-0`, `1.0`, `1E2`, `1e21`), duplicate keys, `__proto__`, and
// integer-like keys out of order.

type J = null | boolean | number | string | J[] | { k: string; v: J }[];

const CHARS = ["a", "Z", "0", " ", "/", '"', "\\", "\n", "\t", "\r", "\b", "\f", "\u0000", "\u001f", "\u007f", "é", "—",
  "\u2028", "\u2029", "😀", "\ud800", "\udbff", "\udc00", "\udfff", "n", "u", "\ufffd"];
const strArb = fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((a) => a.join(""));
const longStrArb = fc.array(fc.constantFrom(...CHARS, "abc ", "line\n"), { minLength: 8, maxLength: 40 }).map((a) => a.join(""));
const keyArb = fc.oneof(strArb, fc.constantFrom("__proto__", "1", "10", "2", "id", "type", "a", "a"));
const numArb = fc.oneof(fc.constantFrom(0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789012345680000, 2 ** 53 + 2, 1.5, -2.5e-300), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
const valueArb: fc.Arbitrary<J> = fc.letrec<{ v: J }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null), fc.boolean(), numArb, strArb, longStrArb,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.array(fc.record({ k: keyArb, v: tie("v") }), { maxLength: 4 }),
  ),
})).v;

/**
 * A random way of writing a JSON value: each token as JSON.stringify writes it, except decision
 * point `oddAt` (counted from 0) and, with probability `p`, any other: another way.
 */
function serialise(x: J, rnd: () => number, oddAt: number, p: number): string {
  let n = 0;
  const odd = () => n++ === oddAt || rnd() < p;
  const ws = () => (odd() ? [" ", "\t", "\r"][Math.floor(rnd() * 3)] : "");
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)];
  const hex = (c: number) => c.toString(16).padStart(4, "0");
  const str = (s: string): string => {
    let out = "";
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      const canon = JSON.stringify(s[i]).slice(1, -1);
      const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff;
      if (pair) {
        const d = s.charCodeAt(i + 1);
        out += odd() ? pick([`\\u${hex(c)}\\u${hex(d)}`, `\\u${hex(c).toUpperCase()}\\u${hex(d)}`, `${s[i]}\\u${hex(d)}`]) : s[i] + s[i + 1];
        i++;
        continue;
      }
      if (!odd()) out += canon;
      else out += pick([`\\u${hex(c)}`, `\\u${hex(c).toUpperCase()}`, s[i] === "/" ? "\\/" : `\\u${hex(c)}`]);
    }
    return `"${out}"`;
  };
  const num = (v: number): string => {
    const t = String(v);
    if (!odd()) return t;
    return pick([Object.is(v, -0) ? "-0" : `${t}.0`, v.toExponential().replace("e+", "e"), t.replace("e+", "e"), t.replace("e", "E"), `${t}e0`, `${t}0`]);
  };
  const go = (v: J): string => {
    let out: string;
    if (v === null) out = "null";
    else if (typeof v === "boolean") out = String(v);
    else if (typeof v === "number") out = num(v);
    else if (typeof v === "string") out = str(v);
    else if (v.length > 0 && typeof v[0] === "object" && v[0] !== null && !Array.isArray(v[0]) && "k" in v[0]) {
      const entries = v as { k: string; v: J }[];
      out = `{${ws()}${entries.map((e) => `${str(e.k)}${ws()}:${ws()}${go(e.v)}`).join(`${ws()},${ws()}`)}${ws()}}`;
    } else out = `[${ws()}${(v as J[]).map(go).join(`${ws()},${ws()}`)}${ws()}]`;
    return `${ws()}${out}${ws()}`;
  };
  return go(x);
}

const t0 = Date.UTC(2026, 0, 2);
const eventArb = fc.record({
  body: fc.array(fc.record({ k: keyArb, v: valueArb }), { maxLength: 5 }),
  id: fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 1e6 }).map((d) => `${t0 + d}-${d.toString(36)}`), strArb),
  ts: fc.oneof(fc.constant(undefined), fc.integer({ min: 0, max: 1e6 }).map((d) => new Date(t0 + d).toISOString()), strArb),
  type: fc.oneof(fc.constant(undefined), fc.constantFrom("a", "tool.result", 'q"t', "é")),
  oddAt: fc.nat({ max: 60 }),
  p: fc.constantFrom(0, 0, 0, 0.05),
  seed: fc.integer(),
});

function hostileLine(e: typeof eventArb extends fc.Arbitrary<infer T> ? T : never): string {
  const top: { k: string; v: J }[] = [];
  if (e.id !== undefined) top.push({ k: "id", v: e.id });
  if (e.ts !== undefined) top.push({ k: "timestamp", v: e.ts });
  if (e.type !== undefined) top.push({ k: "type", v: e.type });
  top.push(...e.body);
  let s = e.seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) | 0) >>> 8) / 0x1000000;
  return serialise(top.length > 0 ? top : [{ k: "x", v: 1 }], rnd, e.oddAt, e.p);
}

/** The proof the walk replaced. */
function oracle(line: Buffer): boolean {
  const s = line.toString("utf8");
  if (!Buffer.from(s, "utf8").equals(line)) return false;
  try {
    const v: unknown = JSON.parse(s);
    return typeof v === "object" && v !== null && !Array.isArray(v) && JSON.stringify(v) === s;
  } catch {
    return false;
  }
}

/** Encode `lines` as one block: each gets a shape exactly when the oracle says so, and the block decodes to its bytes. */
function checkBlock(lines: Buffer[]): void {
  const input = Buffer.concat(lines.flatMap((l) => [l, Buffer.from("\n")]));
  const c = encodeColumns(input, 1);
  const pieces: Buffer[] = [];
  const record = sealBlock(c, textStreams(c.texts, { idOf: (p) => pieces.push(Buffer.from(p, "utf8")) - 1 }, c.snapTexts), 1);
  // The writer's way (text streams from the block's bytes, the pack's ids given) makes the same record.
  expect(sealWithIds(c, pieces.map((_, id) => id), 1).equals(record)).toBe(true);
  const rows = unpackRecord(record)[STREAM.ROWS]?.toString("utf8").split("\n") ?? [];
  lines.forEach((l, i) => {
    expect(rows[i] !== "0", `line ${i}: ${JSON.stringify(l.toString("utf8"))}`).toBe(oracle(l));
  });
  expect(c.encodedLines).toBe(lines.filter(oracle).length);
  const d = decodeBlockRange(record, { lines: lines.length, originalBytes: input.length, lastUnterminated: false, version: FORMAT_VERSION }, (id) => ({ buf: pieces[id], start: 0, end: pieces[id].length }));
  expect(Buffer.from(d.data.subarray(0, input.length)).equals(input)).toBe(true);
}

/** Lines JSON.parse reads as it reads a canonical one (or nearly), each next to its canonical form. */
/** A line with a typed event around bytes that are not UTF-8 (a surrogate encoded), and a stray continuation byte. */
const NOT_UTF8 = [Buffer.from([...Buffer.from('{"type":"t","a":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]), Buffer.from([...Buffer.from('{"type":"t","a":"'), 0x80, ...Buffer.from('x"}')])];

const FIXED = [
  String.raw`{"a":"/"}`, String.raw`{"a":"\/"}`, String.raw`{"a":"x\/y\n"}`, String.raw`{"a":"\u0041"}`, String.raw`{"a":"\u000a"}`, String.raw`{"a":"\n"}`,
  String.raw`{"a":"\u001f"}`, String.raw`{"a":"\u001F"}`, String.raw`{"a":"\ud800"}`, String.raw`{"a":"\uD800"}`, String.raw`{"a":"\ud83d\ude00"}`, `{"a":"😀"}`,
  String.raw`{"a":"😀\ude00"}`, String.raw`{"a":"\ud800\ud800x"}`, String.raw`{"a":"\udc00\ud800"}`, `{"a":"\u2028"}`, String.raw`{"a":"\u2028"}`, String.raw`{"a":"\\\""}`,
  String.raw`{"a":"\\u0041"}`, String.raw`{"id":"1-\u0061"}`, `{"id":"1-a"}`, `{"id":"1-a","timestamp":"1970-01-01T00:00:00.001Z"}`,
  String.raw`{"id":"1-a","timestamp":"1970-01-01T00:00:00.00\u0031Z"}`, String.raw`{"t\u0079pe":"a"}`, String.raw`{"type":"\u0061"}`,
  `{"a":-0}`, `{"a":0}`, `{"a":1e21}`, `{"a":1e+21}`, `{"a":1E+21}`, `{"a":1.0}`, `{"a":1E2}`, `{"a":100}`, `{"a":12345678901234567890}`, `{"a":12345678901234567000}`,
  `{"a":1e400}`, `{"a":1,"a":2}`, `{"a":"xy","a":"zw"}`, `{"a":"x","b":1,"a":"yyyyy"}`, `{"__proto__":1}`, `{"__proto__":{"__proto__":[]}}`,
  `{"b":1,"1":2}`, `{"1":2,"b":1}`, `{"2":1,"10":2}`, `{"a":1 }`, `{ "a":1}`, `{"a" :1}`, `{"a":1}\t`, `{"a":[1 ,2]}`, `{"a":[1,2]}`,
  // Late or odd types, escaped, digit and duplicate keys in nested objects, raw control characters, bytes after the object.
  `{"a":1,"type":"t"}`, `{"type":"t","k\\n":1}`, String.raw`{"type":"t","k\n":1}`, `{"type":"t","o":{"a":1,"a":1}}`, `{"type":"t","o":{"b":1,"1":2}}`,
  `{"type":"t","o":{"1":2,"b":1}}`, `{"type":1,"a":2}`, `{"type":"t","type":"u"}`, String.raw`{"type":"q"t","a":1}`, `{"type":"t","a":"\u0001"}`,
  `{"type":"t","a":"x\ty"}`, `{"type":"t","a":[],"b":{},"c":[{}],"d":-1.5e-7,"e":[true,false,null]}`,
  `{"type":"t","o":{${Array.from({ length: 40 }, (_, k) => `"k${k}":${k}`).join(",")}}}`, `{"type":"t","o":{${Array.from({ length: 40 }, (_, k) => `"k${k % 39}":${k}`).join(",")}}}`,
  // A column made by a line that then stays verbatim (1.0), then lines that use the same path.
  `{"type":"z","n":1,"m":1.0}`, `{"type":"z","n":2}`, `{"type":"z","m":3,"s":"x"}`, `{"type":"z","s":"\\u0041","n":4}`, `{"type":"z","s":"y","n":5}`,
];

describe("the walk as the invertibility proof", () => {
  it("fixed near-canonical lines: a shape exactly when JSON.stringify(JSON.parse(line)) is the line, byte for byte", () => {
    checkBlock([...FIXED.map((l) => Buffer.from(l, "utf8")), ...NOT_UTF8]);
  });

  it("gives a line a shape exactly when JSON.stringify(JSON.parse(line)) is the line, and the block decodes to its bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof({ weight: 8, arbitrary: eventArb.map(hostileLine) }, { weight: 1, arbitrary: fc.constantFrom("", "{", "[1]", "{}", '{"a":1}x', "\u00ff\u00fe") }), { minLength: 1, maxLength: 30 }), (ls) => {
        // A few lines as raw bytes that are not UTF-8 (a lone surrogate encoded, a stray continuation byte).
        checkBlock(ls.map((l) => (l === "\u00ff\u00fe" ? Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]) : Buffer.from(l, "utf8"))));
      }),
      { numRuns: 300 },
    );
  });
});
