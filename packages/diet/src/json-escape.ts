/**
 * A byte-level JSON string escaper: for valid UTF-8 text it writes exactly the UTF-8 bytes of
 * `JSON.stringify(text)` (quotes included) without decoding to a JS string and encoding back.
 * JSON.stringify escapes only `"`, `\` and the code units < 0x20 (`\b \t \n \f \r` by name, the
 * others as `\u00xx` in lowercase hex); every other byte of valid UTF-8 passes verbatim (valid
 * UTF-8 holds no lone surrogates, the only other thing JSON.stringify escapes).
 *
 * The functions are written once as plain JavaScript source (`JSON_ESCAPE_SOURCE`) so the restore
 * worker threads (inline scripts) run the very same code that the tests check here.
 */
import { isUtf8 } from "node:buffer";

/** Plain-JS source of `jsonEscapedLength(src, from, to)` and `jsonEscapeInto(src, from, to, dst, at)`. */
export const JSON_ESCAPE_SOURCE = `
const JSON_ESC_EXTRA = new Uint8Array(256);
const JSON_ESC_NAMED = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) JSON_ESC_EXTRA[b] = 5;
JSON_ESC_EXTRA[0x22] = 1; JSON_ESC_EXTRA[0x5c] = 1;
JSON_ESC_NAMED[0x08] = 0x62; JSON_ESC_NAMED[0x09] = 0x74; JSON_ESC_NAMED[0x0a] = 0x6e;
JSON_ESC_NAMED[0x0c] = 0x66; JSON_ESC_NAMED[0x0d] = 0x72; JSON_ESC_NAMED[0x22] = 0x22; JSON_ESC_NAMED[0x5c] = 0x5c;
for (const b of [0x08, 0x09, 0x0a, 0x0c, 0x0d]) JSON_ESC_EXTRA[b] = 1;
const JSON_ESC_HEX = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102];
/** Bytes of the escaped string of src[from, to), quotes included. */
function jsonEscapedLength(src, from, to) {
  let n = to - from + 2;
  for (let i = from; i < to; i++) n += JSON_ESC_EXTRA[src[i]];
  return n;
}
/** Write the escaped string of src[from, to), quotes included, at dst[at]; returns the end. */
function jsonEscapeInto(src, from, to, dst, at) {
  dst[at++] = 0x22;
  for (let i = from; i < to; i++) {
    const b = src[i];
    const extra = JSON_ESC_EXTRA[b];
    if (extra === 0) {
      dst[at++] = b;
    } else if (extra === 1) {
      dst[at++] = 0x5c;
      dst[at++] = JSON_ESC_NAMED[b];
    } else {
      dst[at++] = 0x5c; dst[at++] = 0x75; dst[at++] = 0x30; dst[at++] = 0x30;
      dst[at++] = JSON_ESC_HEX[b >> 4];
      dst[at++] = JSON_ESC_HEX[b & 15];
    }
  }
  dst[at++] = 0x22;
  return at;
}
`;

type LengthFn = (src: Uint8Array, from: number, to: number) => number;
type IntoFn = (src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number) => number;

const compiled = new Function(`${JSON_ESCAPE_SOURCE}; return { jsonEscapedLength, jsonEscapeInto };`)() as {
  jsonEscapedLength: LengthFn;
  jsonEscapeInto: IntoFn;
};

/** Bytes of `JSON.stringify` of the UTF-8 text `src[from, to)` (quotes included). */
export const jsonEscapedLength: LengthFn = compiled.jsonEscapedLength;
/** Write the UTF-8 bytes of `JSON.stringify` of the UTF-8 text `src[from, to)` at `dst[at]`; returns the end offset. */
export const jsonEscapeInto: IntoFn = compiled.jsonEscapeInto;

/**
 * `Buffer.from(JSON.stringify(body.toString("utf8")))`, computed on the bytes when `body` is
 * valid UTF-8 (the only case where the two agree byte for byte); other bytes take the string path
 * (replacement characters, as before).
 *
 * @example escapeJsonBytes(Buffer.from('a"\n')).toString() // '"a\\"\\n"'
 */
export function escapeJsonBytes(body: Uint8Array): Buffer {
  if (!isUtf8(body)) return Buffer.from(JSON.stringify(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")), "utf8");
  const out = Buffer.allocUnsafe(jsonEscapedLength(body, 0, body.length));
  jsonEscapeInto(body, 0, body.length, out, 0);
  return out;
}
