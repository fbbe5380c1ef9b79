/**
 * The fast path of the audit and the index for lines that are not `state.transition`: one
 * validating byte scan of the whole line instead of `JSON.parse`, which yields only what the
 * `events` table needs (id, timestamp, type, `data.codonId`).
 *
 * The rule (why this is exact): a line takes the fast path only when this scanner proves it is a
 * complete RFC 8259 JSON text whose top level is an object with string `id`, `timestamp`, `type`
 * and a `data` key, each key present once and spelled without escapes, those three strings (and
 * `data.codonId`) free of escapes. Every such line is one `JSON.parse` accepts with the same
 * values (V8 implements RFC 8259; UTF-8 validity is checked before with `isUtf8`). Anything else —
 * a syntax error, a duplicate or escaped key, deep nesting, an escape in a needed value, a
 * `state.transition` — returns `null`, and the caller parses the line with the reader's
 * `parseEventLine`, which decides validity and writes the CORRUPT_LINE message. So the scanner may
 * be conservative (reject valid JSON) but must never accept what JSON.parse rejects; a
 * differential test against JSON.parse guards that.
 */

/** The envelope fields a non-transition line contributes. */
export interface FastEnvelope {
  id: string;
  timestamp: string;
  type: string;
  /** `data.codonId` when it is a string, else null. */
  codon: string | null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const BRACE_OPEN = 0x7b;
const BRACE_CLOSE = 0x7d;
const BRACKET_OPEN = 0x5b;
const BRACKET_CLOSE = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** Deeper nesting falls back to JSON.parse (keeps the container stack fixed-size). */
const MAX_DEPTH = 64;
/** Container kind per depth: 1 object, 2 array. Role per depth: 1 the top-level object, 2 `data`, 0 other. */
const kinds = new Uint8Array(MAX_DEPTH + 2);
const roles = new Uint8Array(MAX_DEPTH + 2);

const KEY_ID = Buffer.from("id");
const KEY_TIMESTAMP = Buffer.from("timestamp");
const KEY_TYPE = Buffer.from("type");
const KEY_DATA = Buffer.from("data");
const KEY_CODON = Buffer.from("codonId");
const TRANSITION = Buffer.from("state.transition");
const TOP_KEYS = new Set(["id", "timestamp", "type", "data"]);
const DATA_KEYS = new Set(["codonId"]);

// Which field the value being scanned fills.
const WANT_NONE = 0;
const WANT_ID = 1;
const WANT_TIMESTAMP = 2;
const WANT_TYPE = 3;
const WANT_CODON = 4;

/** Set by `stringEnd`: the string held an escape. */
let lastEscaped = false;

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The string starting at `p` (which holds `"`): the index just past its closing quote, or -1 when invalid. */
function stringEnd(buf: Uint8Array, p: number, e: number): number {
  p++;
  lastEscaped = false;
  for (;;) {
    let c = 0;
    while (p < e) {
      c = buf[p];
      if (c < 0x20 || c === QUOTE || c === BACKSLASH) break;
      p++;
    }
    if (p >= e || c < 0x20) return -1;
    if (c === QUOTE) return p + 1;
    lastEscaped = true;
    const x = buf[p + 1];
    if (x === 0x75) {
      if (p + 5 >= e || !isHex(buf[p + 2]) || !isHex(buf[p + 3]) || !isHex(buf[p + 4]) || !isHex(buf[p + 5])) return -1;
      p += 6;
    } else if (x === QUOTE || x === BACKSLASH || x === 0x2f || x === 0x62 || x === 0x66 || x === 0x6e || x === 0x72 || x === 0x74) {
      p += 2;
    } else {
      return -1;
    }
  }
}

/** The number starting at `p`: the index just past it, or -1 when invalid (RFC 8259 grammar). */
function numberEnd(buf: Uint8Array, p: number, e: number): number {
  if (buf[p] === 0x2d) p++;
  if (p >= e) return -1;
  let c = buf[p];
  if (c === 0x30) p++;
  else if (c >= 0x31 && c <= 0x39) {
    p++;
    while (p < e && (c = buf[p]) >= 0x30 && c <= 0x39) p++;
  } else return -1;
  if (p < e && buf[p] === 0x2e) {
    p++;
    const from = p;
    while (p < e && (c = buf[p]) >= 0x30 && c <= 0x39) p++;
    if (p === from) return -1;
  }
  if (p < e && ((c = buf[p]) === 0x65 || c === 0x45)) {
    p++;
    if (p < e && ((c = buf[p]) === 0x2b || c === 0x2d)) p++;
    const from = p;
    while (p < e && (c = buf[p]) >= 0x30 && c <= 0x39) p++;
    if (p === from) return -1;
  }
  return p;
}

function literalEnd(buf: Uint8Array, p: number, e: number, word: Buffer): number {
  if (p + word.length > e) return -1;
  for (let i = 0; i < word.length; i++) if (buf[p + i] !== word[i]) return -1;
  return p + word.length;
}
const TRUE = Buffer.from("true");
const FALSE = Buffer.from("false");
const NULL = Buffer.from("null");

function keyIs(buf: Uint8Array, start: number, stop: number, key: Buffer): boolean {
  if (stop - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (buf[start + i] !== key[i]) return false;
  return true;
}

/** True when the (valid, escaped) key string `buf[start, stop)` decodes to one of `keys` (rare: decoded with JSON.parse). */
function escapedKeyIn(buf: Uint8Array, start: number, stop: number, keys: Set<string>): boolean {
  return keys.has(JSON.parse(Buffer.from(buf.buffer, buf.byteOffset + start - 1, stop - start + 2).toString("utf8")) as string);
}

function skipWs(buf: Uint8Array, p: number, e: number): number {
  while (p < e) {
    const c = buf[p];
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) p++;
    else break;
  }
  return p;
}

/**
 * The envelope of the line `buf[start, stop)` when the fast path applies (see the module comment),
 * else null: parse the line with `parseEventLine`. The caller has already checked UTF-8 validity.
 * One iterative pass, locals only, a fixed container stack.
 * @example fastEnvelope(Buffer.from('{"id":"a","timestamp":"t","type":"info","data":{}}'), 0, 49) // {id: "a", …, codon: null}
 */
export function fastEnvelope(buf: Buffer, start: number, stop: number): FastEnvelope | null {
  const e = stop;
  let p = skipWs(buf, start, e);
  if (p >= e || buf[p] !== BRACE_OPEN) return null;
  let idS = -1, idE = -1, tsS = -1, tsE = -1, tyS = -1, tyE = -1, coS = -1, coE = -1;
  let dataSeen = false;
  let want = WANT_NONE;
  let nextRole = 1; // the top-level object
  let depth = 0;
  let needKey = false;
  for (;;) {
    if (needKey) {
      // p: after `{` or `,` of an object (whitespace skipped)
      if (p >= e || buf[p] !== QUOTE) return null;
      const ks = p + 1;
      p = stringEnd(buf, p, e);
      if (p < 0) return null;
      const ke = p - 1;
      const role = roles[depth];
      if (role !== 0) {
        if (lastEscaped) {
          if (escapedKeyIn(buf, ks, ke, role === 1 ? TOP_KEYS : DATA_KEYS)) return null; // "\u0069d" is "id": JSON.parse decides
        } else if (role === 1) {
          const len = ke - ks;
          if (len === 2 && keyIs(buf, ks, ke, KEY_ID)) {
            if (idS !== -1) return null; // a second id: JSON.parse keeps the last
            want = WANT_ID;
          } else if (len === 9 && keyIs(buf, ks, ke, KEY_TIMESTAMP)) {
            if (tsS !== -1) return null;
            want = WANT_TIMESTAMP;
          } else if (len === 4 && keyIs(buf, ks, ke, KEY_TYPE)) {
            if (tyS !== -1) return null;
            want = WANT_TYPE;
          } else if (len === 4 && keyIs(buf, ks, ke, KEY_DATA)) {
            if (dataSeen) return null;
            dataSeen = true;
            nextRole = 2;
          }
        } else if (keyIs(buf, ks, ke, KEY_CODON)) {
          if (coS !== -1) return null; // a second codonId: JSON.parse keeps the last
          want = WANT_CODON;
        }
      }
      p = skipWs(buf, p, e);
      if (p >= e || buf[p] !== COLON) return null;
      p = skipWs(buf, p + 1, e);
      needKey = false;
    }
    // A value at p.
    if (p >= e) return null;
    const c = buf[p];
    if (c === QUOTE) {
      const s = p + 1;
      p = stringEnd(buf, p, e);
      if (p < 0) return null;
      if (want !== WANT_NONE) {
        if (lastEscaped) return null; // a needed value with an escape: JSON.parse decodes it
        if (want === WANT_ID) {
          idS = s;
          idE = p - 1;
        }
        else if (want === WANT_TIMESTAMP) {
          tsS = s;
          tsE = p - 1;
        }
        else if (want === WANT_TYPE) {
          tyS = s;
          tyE = p - 1;
          if (keyIs(buf, tyS, tyE, TRANSITION)) return null; // transitions need the full parse
        } else {
          coS = s;
          coE = p - 1;
        }
        want = WANT_NONE;
      }
      nextRole = 0;
    } else if (c === BRACE_OPEN || c === BRACKET_OPEN) {
      if (want === WANT_CODON) coS = -2; // present, not a string: codon is null
      else if (want !== WANT_NONE) return null; // id/timestamp/type not a string: JSON.parse reports it
      want = WANT_NONE;
      if (depth >= MAX_DEPTH) return null;
      depth++;
      kinds[depth] = c === BRACE_OPEN ? 1 : 2;
      roles[depth] = c === BRACE_OPEN ? nextRole : 0;
      nextRole = 0;
      p = skipWs(buf, p + 1, e);
      if (p < e && buf[p] === (c === BRACE_OPEN ? BRACE_CLOSE : BRACKET_CLOSE)) {
        p++;
        depth--;
      } else {
        needKey = c === BRACE_OPEN;
        continue;
      }
    } else {
      if (want === WANT_CODON) coS = -2;
      else if (want !== WANT_NONE) return null;
      want = WANT_NONE;
      nextRole = 0;
      if (c === 0x74) p = literalEnd(buf, p, e, TRUE);
      else if (c === 0x66) p = literalEnd(buf, p, e, FALSE);
      else if (c === 0x6e) p = literalEnd(buf, p, e, NULL);
      else p = numberEnd(buf, p, e);
      if (p < 0) return null;
    }
    // After a value: `,` or the closing bracket of the current container (possibly several).
    for (;;) {
      p = skipWs(buf, p, e);
      if (depth === 0) {
        if (p !== e || idS < 0 || tsS < 0 || tyS < 0 || !dataSeen) return null;
        return {
          id: buf.toString("utf8", idS, idE),
          timestamp: buf.toString("utf8", tsS, tsE),
          type: buf.toString("utf8", tyS, tyE),
          codon: coS >= 0 ? buf.toString("utf8", coS, coE) : null,
        };
      }
      if (p >= e) return null;
      const d = buf[p];
      if (d === COMMA) {
        p = skipWs(buf, p + 1, e);
        needKey = kinds[depth] === 1;
        break;
      }
      if (d !== (kinds[depth] === 1 ? BRACE_CLOSE : BRACKET_CLOSE)) return null;
      p++;
      depth--;
    }
  }
}
