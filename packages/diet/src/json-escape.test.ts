import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { escapeJsonBytes, jsonEscapeInto, jsonEscapedLength } from "./json-escape.js";
import { JSON_ESCAPE_WASM_BASE64, WASM_ESCAPE_MAX_BYTES, createWasmEscaper } from "./json-escape-wasm.js";

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

describe("the WebAssembly escaper", () => {
  const special = Array.from('\u0000\u0001\b\t\n\u000b\f\r\u000e\u001f"\\/\u007f\u2028é😀a ');

  it("is the assembly of json-escape.wat (run `node tools/build-wasm.mjs json-escape` after editing the .wat)", async () => {
    const { assembleWasm } = await import("../../../tools/build-wasm.mjs");
    const wat = readFileSync(fileURLToPath(new URL("./json-escape.wat", import.meta.url)), "utf8");
    expect((await assembleWasm("json-escape", wat)).toString("base64")).toBe(JSON_ESCAPE_WASM_BASE64);
  });

  it("gives the bytes of JSON.stringify for any well-formed string, call after call (its memory grows and views move)", () => {
    const w = createWasmEscaper(JSON_ESCAPE_WASM_BASE64);
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: "grapheme", maxLength: 300 }), fc.array(fc.constantFrom(...special), { maxLength: 120 }).map((a) => a.join(""))), fc.nat(3), (s, big) => {
        // Now and then a long text, so later calls run after the memory grew.
        const text = big === 0 ? s.repeat(1 + 70_000 / (s.length + 1)) : s;
        const bytes = Buffer.from(text, "utf8");
        w.input(bytes.length).set(bytes);
        expect(Buffer.from(w.escape(bytes.length)).equals(stringify(text))).toBe(true);
      }),
      { numRuns: 600 },
    );
  });

  it("escapes each special byte at every position of a 16-byte block and of the scalar tail", () => {
    const w = createWasmEscaper(JSON_ESCAPE_WASM_BASE64);
    for (let b = 0; b < 0x80; b++) {
      for (let len = 1; len <= 40; len++) {
        for (let at = 0; at < len; at++) {
          const bytes = Buffer.alloc(len, 0x61);
          bytes[at] = b;
          w.input(len).set(bytes);
          const want = stringify(bytes.toString("latin1"));
          if (!Buffer.from(w.escape(len)).equals(want)) expect.fail(`byte ${b} at ${at} of ${len}`);
        }
      }
    }
    w.input(0);
    expect(Buffer.from(w.escape(0)).toString()).toBe('""');
  });

  it("refuses a text over WASM_ESCAPE_MAX_BYTES, which escapeJsonBytes then escapes in JavaScript, same bytes", () => {
    const w = createWasmEscaper(JSON_ESCAPE_WASM_BASE64);
    expect(() => w.input(WASM_ESCAPE_MAX_BYTES + 1)).toThrow(RangeError);
    const text = `"\n${"é".repeat(WASM_ESCAPE_MAX_BYTES / 2)}`;
    const bytes = Buffer.from(text, "utf8");
    expect(bytes.length).toBeGreaterThan(WASM_ESCAPE_MAX_BYTES);
    expect(escapeJsonBytes(bytes).equals(stringify(text))).toBe(true);
  });
});
