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
/** Deeper nesting falls back to JSON.parse (keeps the recursion bounded). */
const MAX_DEPTH = 64;

const KEY_ID = Buffer.from("id");
const KEY_TIMESTAMP = Buffer.from("timestamp");
const KEY_TYPE = Buffer.from("type");
const KEY_DATA = Buffer.from("data");
const KEY_CODON = Buffer.from("codonId");
const TRANSITION = Buffer.from("state.transition");

/** Scanner state of one line (module-level: the scan is synchronous and never re-entered). */
let b: Uint8Array = new Uint8Array(0);
let end = 0;
let pos = 0;
/** Set by `str`: the string held an escape. */
let escaped = false;
// Spans of the top-level fields ([start, end) of the string contents; -1 = absent).
let idS = -1, idE = -1, tsS = -1, tsE = -1, tyS = -1, tyE = -1, coS = -1, coE = -1;
let dataSeen = false;
/** Set when the line must go to JSON.parse even if it is valid (duplicate key, escaped value, …). */
let bail = false;

function ws(): void {
  while (pos < end) {
    const c = b[pos];
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) pos++;
    else return;
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** A string at `pos` (which holds `"`): moves past the closing quote. False when invalid. */
function str(): boolean {
  const buf = b;
  const e = end;
  let p = pos + 1;
  escaped = false;
  for (;;) {
    // Hot loop: plain bytes of the string (locals only).
    let c = 0;
    while (p < e) {
      c = buf[p];
      if (c < 0x20 || c === QUOTE || c === BACKSLASH) break;
      p++;
    }
    if (p >= e || c < 0x20) return false;
    if (c === QUOTE) {
      pos = p + 1;
      return true;
    }
    escaped = true;
    const x = buf[p + 1];
    if (x === 0x75) {
      if (p + 5 >= e || !isHex(buf[p + 2]) || !isHex(buf[p + 3]) || !isHex(buf[p + 4]) || !isHex(buf[p + 5])) return false;
      p += 6;
    } else if (x === QUOTE || x === BACKSLASH || x === 0x2f || x === 0x62 || x === 0x66 || x === 0x6e || x === 0x72 || x === 0x74) {
      p += 2;
    } else {
      return false;
    }
  }
}

function digits(): boolean {
  const from = pos;
  while (pos < end && b[pos] >= 0x30 && b[pos] <= 0x39) pos++;
  return pos > from;
}

function num(): boolean {
  if (b[pos] === 0x2d) pos++;
  if (pos >= end) return false;
  if (b[pos] === 0x30) pos++;
  else if (b[pos] >= 0x31 && b[pos] <= 0x39) digits();
  else return false;
  if (pos < end && b[pos] === 0x2e) {
    pos++;
    if (!digits()) return false;
  }
  if (pos < end && (b[pos] === 0x65 || b[pos] === 0x45)) {
    pos++;
    if (pos < end && (b[pos] === 0x2b || b[pos] === 0x2d)) pos++;
    if (!digits()) return false;
  }
  return true;
}

function lit(word: string): boolean {
  if (pos + word.length > end) return false;
  for (let i = 0; i < word.length; i++) if (b[pos + i] !== word.charCodeAt(i)) return false;
  pos += word.length;
  return true;
}

function keyIs(start: number, stop: number, key: Buffer): boolean {
  if (stop - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (b[start + i] !== key[i]) return false;
  return true;
}

const TOP_KEYS = new Set(["id", "timestamp", "type", "data"]);
const DATA_KEYS = new Set(["codonId"]);

/** True when the (valid, escaped) key string `b[start, stop)` decodes to one of `keys` (rare: decoded with JSON.parse). */
function escapedKeyIn(start: number, stop: number, keys: Set<string>): boolean {
  return keys.has(JSON.parse(Buffer.from(b.buffer, b.byteOffset + start - 1, stop - start + 2).toString("utf8")) as string);
}

/** Any JSON value at `pos`. `role`: 0 ordinary, 1 the top-level object, 2 the `data` object. */
function value(depth: number, role: number): boolean {
  if (pos >= end) return false;
  const c = b[pos];
  if (c === QUOTE) return str();
  if (c === 0x7b) return obj(depth + 1, role);
  if (c === 0x5b) return arr(depth + 1);
  if (c === 0x74) return lit("true");
  if (c === 0x66) return lit("false");
  if (c === 0x6e) return lit("null");
  return num();
}

function arr(depth: number): boolean {
  if (depth > MAX_DEPTH) return (bail = true), false;
  pos++;
  ws();
  if (pos < end && b[pos] === 0x5d) return pos++, true;
  for (;;) {
    ws();
    if (!value(depth, 0)) return false;
    ws();
    if (pos >= end) return false;
    if (b[pos] === 0x2c) pos++;
    else if (b[pos] === 0x5d) return pos++, true;
    else return false;
  }
}

/** A string value of a needed field: its content span, or bail when it is not an escape-free string. */
function neededString(): [number, number] | null {
  if (b[pos] !== QUOTE) {
    bail = true; // not a string: JSON.parse decides (corrupt for id/timestamp/type, null codon)
    return null;
  }
  const s = pos + 1;
  if (!str()) return null;
  if (escaped) bail = true;
  return [s, pos - 1];
}

function obj(depth: number, role: number): boolean {
  if (depth > MAX_DEPTH) return (bail = true), false;
  pos++;
  ws();
  if (pos < end && b[pos] === 0x7d) return pos++, true;
  for (;;) {
    ws();
    if (pos >= end || b[pos] !== QUOTE) return false;
    const ks = pos + 1;
    if (!str()) return false;
    const ke = pos - 1;
    const keyEscaped = escaped;
    ws();
    if (pos >= end || b[pos] !== 0x3a) return false;
    pos++;
    ws();
    if (pos >= end) return false;
    let handled = false;
    if (role === 1) {
      if (keyEscaped) {
        if (escapedKeyIn(ks, ke, TOP_KEYS)) bail = true; // "\u0069d" is "id": let JSON.parse decide
      } else if (keyIs(ks, ke, KEY_ID) || keyIs(ks, ke, KEY_TIMESTAMP) || keyIs(ks, ke, KEY_TYPE)) {
        const which = ke - ks; // 2 id, 9 timestamp, 4 type
        if ((which === 2 ? idS : which === 9 ? tsS : tyS) !== -1) bail = true;
        const span = neededString();
        if (span === null) return false;
        if (which === 2) [idS, idE] = span;
        else if (which === 9) [tsS, tsE] = span;
        else {
          [tyS, tyE] = span;
          if (keyIs(tyS, tyE, TRANSITION)) return (bail = true), false; // transitions need the full parse
        }
        handled = true;
      } else if (keyIs(ks, ke, KEY_DATA)) {
        if (dataSeen) bail = true;
        dataSeen = true;
        if (b[pos] === 0x7b) {
          if (!obj(depth + 1, 2)) return false;
          handled = true;
        }
      }
    } else if (role === 2) {
      if (keyEscaped) {
        if (escapedKeyIn(ks, ke, DATA_KEYS)) bail = true;
      } else if (keyIs(ks, ke, KEY_CODON)) {
        if (coS !== -1) bail = true; // a second codonId: JSON.parse keeps the last
        if (b[pos] === QUOTE) {
          const span = neededString();
          if (span === null) return false;
          [coS, coE] = span;
        } else {
          coS = -2; // present but not a string: codon is null
          if (!value(depth, 0)) return false;
        }
        handled = true;
      }
    }
    if (!handled && !value(depth, 0)) return false;
    ws();
    if (pos >= end) return false;
    if (b[pos] === 0x2c) pos++;
    else if (b[pos] === 0x7d) return pos++, true;
    else return false;
  }
}

/**
 * The envelope of the line `buf[start, stop)` when the fast path applies (see the module comment),
 * else null: parse the line with `parseEventLine`. The caller has already checked UTF-8 validity.
 * @example fastEnvelope(Buffer.from('{"id":"a","timestamp":"t","type":"info","data":{}}'), 0, 49) // {id: "a", …, codon: null}
 */
export function fastEnvelope(buf: Buffer, start: number, stop: number): FastEnvelope | null {
  b = buf;
  end = stop;
  pos = start;
  idS = tsS = tyS = coS = -1;
  dataSeen = false;
  bail = false;
  ws();
  if (pos >= end || b[pos] !== 0x7b) return null;
  const ok = obj(1, 1);
  if (!ok || bail) return null;
  ws();
  if (pos !== end || idS < 0 || tsS < 0 || tyS < 0 || !dataSeen) return null;
  return {
    id: buf.toString("utf8", idS, idE),
    timestamp: buf.toString("utf8", tsS, tsE),
    type: buf.toString("utf8", tyS, tyE),
    codon: coS >= 0 ? buf.toString("utf8", coS, coE) : null,
  };
}
