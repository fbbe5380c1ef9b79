import { envelopeProblem } from "@hankweave-journal/journal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastEnvelope } from "./fast-envelope.js";

/** What JSON.parse + the reader's envelope check make of a line (null: corrupt). */
function slow(text: string): { id: string; timestamp: string; type: string; codon: string | null } | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (envelopeProblem(v) !== undefined) return null;
  const o = v as { id: string; timestamp: string; type: string; data: unknown };
  const d = o.data as Record<string, unknown> | null;
  const codon = d !== null && typeof d === "object" && typeof d.codonId === "string" ? d.codonId : null;
  return { id: o.id, timestamp: o.timestamp, type: o.type, codon };
}

function fast(text: string): ReturnType<typeof fastEnvelope> {
  const buf = Buffer.from(text, "utf8");
  return fastEnvelope(buf, 0, buf.length);
}

const ENV = '{"id":"1-a","timestamp":"2026-03-05T18:50:18.415Z","type":"assistant.action","data":';

describe("fastEnvelope", () => {
  it("reads id, timestamp, type and data.codonId of a canonical line", () => {
    expect(fast(`${ENV}{"codonId":"step-1","content":"x \\"q\\" \\u00e9","n":[1,-2.5e3,true,null,{}]}}`)).toEqual({
      id: "1-a", timestamp: "2026-03-05T18:50:18.415Z", type: "assistant.action", codon: "step-1",
    });
    expect(fast(`${ENV}{"nested":{"codonId":"deep"}}}`)?.codon).toBeNull();
    expect(fast(`${ENV}"text"}`)?.codon).toBeNull();
    expect(fast(`${ENV}{"codonId":7}}`)?.codon).toBeNull();
    expect(fast(` {"type":"x","data":null,"timestamp":"t","id":"i"} \r`)).toEqual({ id: "i", timestamp: "t", type: "x", codon: null });
  });

  it("never accepts a line JSON.parse or the envelope check rejects (hand-picked corrupt lines)", () => {
    const bad = [
      `${ENV}{}`, `${ENV}{}}}`, `${ENV}{"a":01}}`, `${ENV}{"a":1.}}`, `${ENV}{"a":.5}}`, `${ENV}{"a":-}}`, `${ENV}{"a":1e}}`,
      `${ENV}{"a":"tab\there"}}`, `${ENV}{"a":"\\x"}}`, `${ENV}{"a":"\\u12"}}`, `${ENV}{"a":tru}}`, `${ENV}{"a":[1,]}}`,
      `${ENV}{"a":1,}}`, `${ENV}{a:1}}`, `${ENV}{"a" 1}}`, `${ENV}{"a":'x'}}`, `${ENV}{"a":NaN}}`, `${ENV}{"a":+1}}`,
      '{"id":"i","timestamp":"t","type":"x"}', '{"id":1,"timestamp":"t","type":"x","data":1}', '[1]', '"x"', '',
      '{"id":"i","timestamp":"t","type":"x","data":1,"id":2}', '{"id":"i","timestamp":"t","type":"x","data":1} x',
    ];
    for (const line of bad) expect(fast(line), line).toBeNull();
    for (const line of bad) if (slow(line) === null) expect(fast(line)).toBeNull();
  });

  it("falls back (null) where decoding or JSON.parse's last-key-wins would matter", () => {
    expect(fast('{"id":"i","timestamp":"t","type":"x","data":1,"type":"y"}')).toBeNull();
    expect(fast('{"\\u0069d":"i","timestamp":"t","type":"x","data":1}')).toBeNull();
    expect(fast('{"id":"i\\n","timestamp":"t","type":"x","data":1}')).toBeNull();
    expect(fast(`${ENV}{"codonId":"a","codonId":"b"}}`)).toBeNull();
    expect(fast(`${ENV.replace("assistant.action", "state.transition")}{}}`)).toBeNull();
    expect(fast(`${ENV}${"[".repeat(100)}${"]".repeat(100)}}`)).toBeNull();
  });

  it("agrees with JSON.parse on every line it accepts (property: random JSON values, then random byte edits)", () => {
    const envelope = fc.record({
      id: fc.string(), timestamp: fc.string(), type: fc.string(), data: fc.jsonValue(),
    }, { requiredKeys: [] });
    fc.assert(
      fc.property(envelope, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 127 })), { maxLength: 3 }), (obj, edits) => {
        let text = JSON.stringify(obj);
        for (const [at, ch] of edits) {
          const i = text.length === 0 ? 0 : at % text.length;
          text = text.slice(0, i) + String.fromCharCode(ch) + text.slice(i + 1);
        }
        const f = fast(text);
        if (f !== null) expect(f).toEqual(slow(text));
        // Unedited canonical envelopes with escape-free fields must take the fast path.
        if (edits.length === 0 && slow(text) !== null && obj.type !== "state.transition" && !/[\\"\u0000-\u001f]/.test(`${obj.id}${obj.timestamp}${obj.type}`)) {
          const d = obj.data as Record<string, unknown> | null;
          const c = d !== null && typeof d === "object" && !Array.isArray(d) ? d.codonId : undefined;
          if (typeof c !== "string" || !/[\\"\u0000-\u001f]/.test(c)) expect(f).not.toBeNull();
        }
      }),
      { numRuns: 3000 },
    );
  });
});
