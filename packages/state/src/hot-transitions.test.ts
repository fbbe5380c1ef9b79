import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HotTransitionParser, jsonNumber } from "./hot-transitions.js";

/** A line as the runtime and our engine write it. */
function hotLine(o: {
  id: unknown; timestamp: unknown; runId: unknown; codonId: unknown; outerRunId?: unknown; outerCodonId?: unknown;
  kind: "costs" | "count"; numbers: unknown[]; currentRunId: unknown; rs: unknown[];
}): string {
  const data = o.kind === "costs"
    ? {
      runId: o.runId, codonId: o.codonId, costDelta: o.numbers[0],
      tokensDelta: { inputTokens: o.numbers[1], outputTokens: o.numbers[2], cacheCreationTokens: o.numbers[3], cacheReadTokens: o.numbers[4] },
    }
    : { runId: o.runId, codonId: o.codonId, newCount: o.numbers[0] };
  const type = o.kind === "costs" ? "CostsIncremented" : "AssistantMessageCountUpdated";
  return JSON.stringify({
    id: o.id, timestamp: o.timestamp, type: "state.transition",
    data: {
      transitionType: type, runId: o.outerRunId ?? o.runId, codonId: o.outerCodonId ?? o.codonId,
      transition: { type, data },
      resultingState: { currentRunId: o.currentRunId, runCount: o.rs[0], totalCost: o.rs[1], currentRunCost: o.rs[2] },
    },
  });
}

/** Numbers as they appear in journals, and the awkward ones. */
const numberArb = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.nat({ max: 1_000_000 }),
  fc.integer({ min: 0, max: 1e8 }).map((n) => n / 1e8),
  fc.constantFrom(0, -0, 0.1, 0.05781764999999999, 0.09256589999999999, 1e21, 1e-7, 2 ** 53, 2 ** 53 + 2, 123456789012345680000, 5e-324),
);
/** Printable ASCII without a quote or a backslash (JSON.stringify leaves such a string unescaped). */
const plainString = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7f }).filter((c) => c !== 0x22 && c !== 0x5c).map((c) => String.fromCharCode(c)), maxLength: 30,
});
const anyString = fc.oneof(plainString, fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 6 }), fc.constantFrom('a"b', "a\\b", "\n", "é", "\u2028", ""));
const lineArb = fc.record({
  id: fc.oneof(plainString, anyString), timestamp: fc.oneof(plainString, anyString), runId: anyString, codonId: anyString,
  outerRunId: fc.option(anyString, { nil: undefined }), outerCodonId: fc.option(anyString, { nil: undefined }),
  kind: fc.constantFrom("costs" as const, "count" as const),
  numbers: fc.array(numberArb, { minLength: 5, maxLength: 5 }),
  currentRunId: fc.oneof(fc.constant(null), anyString),
  rs: fc.array(numberArb, { minLength: 3, maxLength: 3 }),
}).map(hotLine);

/** What JSON.parse and the envelope rules say of `bytes`: the event, or undefined when not a valid line. */
function reference(bytes: Buffer): Record<string, unknown> | undefined {
  if (!isUtf8(bytes)) return undefined;
  try {
    return JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The fast result must be exactly JSON.parse's, numbers to the bit (toStrictEqual tells -0 from 0). */
function checkAgainstJsonParse(bytes: Buffer): boolean {
  const p = new HotTransitionParser();
  const padded = Buffer.concat([Buffer.from("xx\n"), bytes, Buffer.from("\nyy")]);
  const t = p.match(padded, 3, 3 + bytes.length);
  const whole = p.matchEvent(padded, 3, 3 + bytes.length);
  expect(t === undefined).toBe(whole === undefined);
  if (t === undefined) return false;
  const ref = reference(bytes);
  expect(ref).toBeDefined();
  expect(whole).toStrictEqual(ref);
  const data = ref!.data as Record<string, unknown>;
  expect(t).toStrictEqual(data.transition);
  expect(p.timestamp).toBe(ref!.timestamp);
  return true;
}

describe("hot transition lines read without JSON.parse", () => {
  it("a line as the runtime writes it (plain ids, any numbers) is matched and equals JSON.parse to the bit", () => {
    fc.assert(fc.property(
      fc.record({
        id: plainString, timestamp: plainString, runId: plainString, codonId: plainString,
        kind: fc.constantFrom("costs" as const, "count" as const),
        numbers: fc.array(numberArb, { minLength: 5, maxLength: 5 }),
        currentRunId: fc.oneof(fc.constant(null), plainString),
        rs: fc.array(numberArb, { minLength: 3, maxLength: 3 }),
      }).map(hotLine),
      (line) => {
        expect(checkAgainstJsonParse(Buffer.from(line))).toBe(true);
      },
    ), { numRuns: 2000 });
  });

  it("any line built from any strings (escapes, non-ASCII, quotes) is either not matched or equals JSON.parse", () => {
    fc.assert(fc.property(lineArb, (line) => {
      checkAgainstJsonParse(Buffer.from(line));
    }), { numRuns: 2000 });
  });

  it("a line with any byte inserted, removed or replaced is either not matched or a valid line equal to JSON.parse", () => {
    const interesting = fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x20, 0x22, 0x5c, 0x2c, 0x7b, 0x7d, 0x30, 0x31, 0x2e, 0x2d, 0x65, 0x45, 0x2b, 0x6e, 0x09, 0x0d, 0x80, 0xc3, 0xff),
    );
    fc.assert(fc.property(lineArb, fc.nat(), interesting, fc.constantFrom("insert", "remove", "replace"), (line, at, byte, op) => {
      const b = Buffer.from(line);
      const i = at % (b.length + 1);
      let m: Buffer;
      if (op === "insert") m = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
      else if (op === "remove") m = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
      else m = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i + 1)]);
      checkAgainstJsonParse(m);
    }), { numRuns: 5000 });
  });

  it("escaped keys, duplicate keys, nested or reordered types, whitespace and bad numbers are never matched", () => {
    const good = hotLine({
      id: "1-a", timestamp: "2026-03-06T12:03:07.664Z", runId: "r", codonId: "c", kind: "count", numbers: [3], currentRunId: "r", rs: [1, 0.5, 0.25],
    });
    expect(checkAgainstJsonParse(Buffer.from(good))).toBe(true);
    const variants = [
      good.replace('"type":"state.transition"', '"\\u0074ype":"state.transition"'),
      good.replace('"newCount":3', '"newCount":3,"newCount":4'),
      good.replace('"newCount":3', '"newCount":03'),
      good.replace('"newCount":3', '"newCount":3.'),
      good.replace('"newCount":3', '"newCount":.3'),
      good.replace('"newCount":3', '"newCount":+3'),
      good.replace('"newCount":3', '"newCount": 3'),
      good.replace('"newCount":3', '"newCount":3e'),
      good.replace('"newCount":3', '"newCount":"3"'),
      good.replace('"newCount":3', '"newCount":null'),
      good.replace('"runCount":1', '"runCount":null'),
      good.replace('"currentRunId":"r"', '"currentRunId":nul'),
      good.replace('"type":"AssistantMessageCountUpdated"', '"type":"CostsIncremented"'),
      good.replace('{"type":"AssistantMessageCountUpdated","data":', '{"data":'),
      good.replace('"id":"1-a"', '"id":"1-\\u0061"'),
      good.replace('"id":"1-a"', '"id":"1-é"'),
      good + " ",
      " " + good,
      good.slice(0, -1),
      good + "}",
      good.replace(',"resultingState"', ',"type":"x","resultingState"'),
    ];
    for (const v of variants) {
      expect(v).not.toBe(good);
      expect(checkAgainstJsonParse(Buffer.from(v)), v).toBe(false);
    }
  });
});

describe("jsonNumber", () => {
  it("equals JSON.parse for every finite double's shortest text (to the bit)", () => {
    fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
      const text = JSON.stringify(d);
      expect(Object.is(jsonNumber(text), JSON.parse(text))).toBe(true);
    }), { numRuns: 20000 });
  });

  it("equals JSON.parse for any text in JSON's number grammar (long mantissas, many fraction digits, exponents)", () => {
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });
    const text = fc.tuple(
      fc.boolean(), fc.oneof(fc.constant("0"), fc.tuple(fc.constantFrom(..."123456789"), digits(0, 25)).map(([a, b]) => a + b)),
      fc.option(digits(1, 30), { nil: undefined }), fc.option(fc.tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 3)), { nil: undefined }),
    ).map(([neg, int, frac, exp]) => `${neg ? "-" : ""}${int}${frac !== undefined ? `.${frac}` : ""}${exp ? exp.join("") : ""}`);
    fc.assert(fc.property(text, (t) => {
      expect(Object.is(jsonNumber(t), JSON.parse(t)), t).toBe(true);
    }), { numRuns: 20000 });
  });
});
