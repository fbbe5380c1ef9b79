import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { escapeJsonBytes, jsonEscapeInto, jsonEscapedLength } from "./json-escape.js";

const stringify = (s: string): Buffer => Buffer.from(JSON.stringify(s), "utf8");

describe("escapeJsonBytes", () => {
  it("gives the bytes of JSON.stringify for any well-formed string", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (s) => {
        expect(escapeJsonBytes(Buffer.from(s, "utf8")).equals(stringify(s))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("gives the bytes of JSON.stringify for strings dense in controls, quotes and backslashes", () => {
    const special = fc.constantFrom(...Array.from("\u0000\u0001\b\t\n\u000b\f\r\u000e\u001f\"\\/\u007f\u2028\u2029é😀a "));
    fc.assert(
      fc.property(fc.array(special, { maxLength: 100 }), (chars) => {
        const s = chars.join("");
        expect(escapeJsonBytes(Buffer.from(s, "utf8")).equals(stringify(s))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("escapes every byte below 0x20 as JSON.stringify does", () => {
    for (let b = 0; b < 0x20; b++) {
      const s = String.fromCharCode(b);
      expect(escapeJsonBytes(Buffer.from([b])).toString("utf8")).toBe(JSON.stringify(s));
    }
  });

  it("takes the string path for bytes that are not UTF-8 (replacement characters, like before)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const b = Buffer.from(bytes);
        expect(escapeJsonBytes(b).equals(stringify(b.toString("utf8")))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("agrees with JSON.stringify at every alignment of the view and of the slice (the 4-byte word path)", () => {
    const special = fc.constantFrom(...Array.from('\u0000\n\t"\\é😀abcdefgh '));
    fc.assert(
      fc.property(fc.array(special, { maxLength: 80 }), fc.nat(7), fc.nat(7), fc.nat(7), (chars, shift, cutFront, cutBack) => {
        const text = Buffer.from(chars.join(""), "utf8");
        const backing = new Uint8Array(text.length + 16);
        backing.set(text, shift);
        const view = backing.subarray(shift, shift + text.length);
        // Slices that cut inside a multi-byte character are not UTF-8: compare on slice boundaries that are.
        const from = Math.min(cutFront, view.length);
        const to = Math.max(from, view.length - cutBack);
        const slice = Buffer.from(view.subarray(from, to));
        if (!slice.toString("utf8").includes("\ufffd")) {
          const expected = stringify(slice.toString("utf8"));
          expect(jsonEscapedLength(view, from, to)).toBe(expected.length);
          const dst = Buffer.alloc(expected.length + 2);
          expect(jsonEscapeInto(view, from, to, dst, 1)).toBe(expected.length + 1);
          expect(dst.subarray(1, 1 + expected.length).equals(expected)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("escapes a slice in place of a larger buffer, length first", () => {
    const src = Buffer.from('xx"a\nb\\yy');
    const n = jsonEscapedLength(src, 2, 7);
    const dst = Buffer.alloc(n + 3, 0x2e);
    expect(jsonEscapeInto(src, 2, 7, dst, 1)).toBe(n + 1);
    expect(dst.toString()).toBe(`.${JSON.stringify('"a\nb\\')}..`);
  });
});
