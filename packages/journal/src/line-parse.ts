/**
 * Byte-level helpers for one journal line: a type sniffer that reads the canonical envelope prefix
 * without JSON.parse, and the envelope parser that turns a line into an event or a finding.
 */
import { isUtf8 } from "node:buffer";
import type { Finding, JournalEvent } from "@hankweave-journal/core";

const PREFIX_ID = Buffer.from('{"id":"', "latin1");
const SEP_TIMESTAMP = Buffer.from(',"timestamp":"', "latin1");
const SEP_TYPE = Buffer.from(',"type":"', "latin1");
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Sniffing gives up past this many bytes: canonical ids, timestamps and types are far shorter. */
const SNIFF_LIMIT_BYTES = 512;

function startsWithAt(bytes: Uint8Array, at: number, end: number, prefix: Buffer): boolean {
  if (at + prefix.length > end) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

/** Index of the closing quote of a JSON string starting at `from`; -1 on an escape or past the limit. */
function stringEnd(bytes: Uint8Array, from: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    const b = bytes[i];
    if (b === QUOTE) return i;
    if (b === BACKSLASH || b < 0x20) return -1;
  }
  return -1;
}

/**
 * Where the `type` string of a canonical line sits: `[start, end)` byte indexes, or undefined
 * when the line does not start with the exact canonical prefix (no allocation: the hot path of
 * `events({types})`).
 */
export function sniffTypeSpan(bytes: Uint8Array): [number, number] | undefined {
  const typeStart = sniffTypeStartAt(bytes, 0, bytes.length);
  if (typeStart < 0) return undefined;
  const typeEnd = sniffedTypeEnd;
  return laterTopLevelTypeKey(bytes, typeEnd + 1, bytes.length) ? undefined : [typeStart, typeEnd];
}

const TYPE_KEY = Buffer.from("type", "latin1");

/**
 * True when the members of the envelope object from `from` (just past the sniffed type string,
 * depth 1) to `end` may hold another top-level `type` key: JSON.parse keeps the LAST duplicate,
 * so a sniffed first `type` would disagree with what `stats`, `index` and every parse count. A
 * key with an escape (`"\u0074ype"`) counts as possible. A line that runs off `end` unclosed is
 * not JSON (no parse gives it a type), so that does not count. Strings are
 * skipped with a native quote search, so a body costs a few calls, not a loop over its bytes.
 */
function laterTopLevelTypeKey(bytes: Uint8Array, from: number, end: number): boolean {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let depth = 1;
  let expectKey = false;
  let i = from;
  while (i < end) {
    const c = b[i];
    if (c === QUOTE) {
      if (depth === 1 && expectKey) {
        // A top-level key: short, compared byte by byte; any escape may spell "type".
        let j = i + 1;
        while (j < end && b[j] !== QUOTE) {
          if (b[j] === BACKSLASH) return true;
          j++;
        }
        if (j >= end) return false;
        if (j - i - 1 === TYPE_KEY.length && b[i + 1] === 0x74 && b[i + 2] === 0x79 && b[i + 3] === 0x70 && b[i + 4] === 0x65) return true;
        expectKey = false;
        i = j + 1;
        continue;
      }
      let j = i + 1;
      for (;;) {
        const q = b.indexOf(QUOTE, j);
        if (q < 0 || q >= end) return false;
        let k = q - 1;
        while (k > i && b[k] === BACKSLASH) k--;
        if ((q - 1 - k) % 2 === 0) {
          j = q;
          break;
        }
        j = q + 1;
      }
      i = j + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return false;
    } else if (c === 0x2c && depth === 1) expectKey = true;
    i++;
  }
  return false;
}

/** The closing quote of the type string found by the latest successful `sniffTypeStartAt`. */
let sniffedTypeEnd = -1;

/**
 * `sniffTypeSpan` of the line `bytes[start, end)` (no view needed): the index where the type
 * string starts (its closing quote is then within the sniff limit), or -1.
 */
function sniffTypeStartAt(bytes: Uint8Array, start: number, end: number): number {
  const limit = Math.min(end, start + SNIFF_LIMIT_BYTES);
  if (!startsWithAt(bytes, start, end, PREFIX_ID)) return -1;
  const idEnd = stringEnd(bytes, start + PREFIX_ID.length, limit);
  if (idEnd < 0 || !startsWithAt(bytes, idEnd + 1, end, SEP_TIMESTAMP)) return -1;
  const tsEnd = stringEnd(bytes, idEnd + 1 + SEP_TIMESTAMP.length, limit);
  if (tsEnd < 0 || !startsWithAt(bytes, tsEnd + 1, end, SEP_TYPE)) return -1;
  const typeStart = tsEnd + 1 + SEP_TYPE.length;
  const typeEnd = stringEnd(bytes, typeStart, limit);
  if (typeEnd < 0 || typeEnd + 1 >= end) return -1;
  const next = bytes[typeEnd + 1];
  if (next !== 0x2c && next !== 0x7d) return -1; // `,` or `}` must follow the type string
  sniffedTypeEnd = typeEnd;
  return typeStart;
}

/**
 * The `type` of a canonical journal line (`{"id":"…","timestamp":"…","type":"…"`), read from the
 * raw bytes without JSON.parse.
 *
 * Guarantees: returns a type only when the line starts with exactly that canonical prefix and the
 * three strings hold no escapes; otherwise `undefined` (the caller must then parse the line).
 * It does not validate the rest of the line.
 *
 * @example sniffEventType(Buffer.from('{"id":"1-a","timestamp":"t","type":"info","data":{}}')) // "info"
 */
export function sniffEventType(bytes: Uint8Array): string | undefined {
  const span = sniffTypeSpan(bytes);
  if (!span) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + span[0], span[1] - span[0]).toString("utf8");
}

/**
 * The `type` string of the canonical prefix alone, as `sniffEventType` reads it but without its
 * walk over the rest of the line for a later top-level `type` key (a whole body per line): for a
 * caller that parses the line anyway and refuses such a key on the parsed keys (the diet's
 * `rewriteLine`).
 *
 * Guarantees: a string only when the line starts with exactly the canonical prefix and its three
 * strings hold no escapes; otherwise `undefined`. A later duplicate `type` key is NOT excluded.
 *
 * @example sniffPrefixType(Buffer.from('{"id":"1-a","timestamp":"t","type":"info","data":{},"type":"x"}')) // "info"
 */
export function sniffPrefixType(bytes: Uint8Array): string | undefined {
  const typeStart = sniffTypeStartAt(bytes, 0, bytes.length);
  if (typeStart < 0) return undefined;
  return Buffer.from(bytes.buffer, bytes.byteOffset + typeStart, sniffedTypeEnd - typeStart).toString("utf8");
}

/**
 * A matcher for a set of types over raw lines: `true`/`false` when the canonical prefix says
 * whether the line's type is in the set, `undefined` when it cannot tell (parse the line).
 * Compares bytes; decodes nothing.
 */
export function typeSniffer(types: Iterable<string>): (bytes: Uint8Array) => boolean | undefined {
  const at = typeSnifferAt(types);
  return (bytes) => at(bytes, 0, bytes.length);
}

/**
 * `typeSniffer` over the line `bytes[start, end)` of a larger buffer (a read chunk), so lines of
 * other types are rejected without creating a view or any object.
 * @example typeSnifferAt(["info"])(chunk, 120, 180) // true | false | undefined
 */
export function typeSnifferAt(types: Iterable<string>): (bytes: Uint8Array, start: number, end: number) => boolean | undefined {
  const needles = [...new Set(types)].map((t) => Buffer.from(t, "utf8"));
  return (bytes, start, end) => {
    const typeStart = sniffTypeStartAt(bytes, start, end);
    if (typeStart < 0) return undefined;
    const len = sniffedTypeEnd - typeStart;
    outer: for (const n of needles) {
      if (n.length !== len) continue;
      for (let i = 0; i < n.length; i++) if (bytes[typeStart + i] !== n[i]) continue outer;
      return true; // the parse that follows judges the last-wins type (recordOfLine checks it again)
    }
    // Excluding unparsed needs the type JSON.parse would give: a later duplicate key wins.
    return laterTopLevelTypeKey(bytes, sniffedTypeEnd + 1, end) ? undefined : false;
  };
}

/** True for a line that holds only spaces, tabs or a carriage return (skipped silently). */
export function isBlankLine(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/** The outcome of parsing one complete line. */
export type LineParse = { ok: true; event: JournalEvent } | { ok: false; finding: Finding };

/**
 * Parse one complete, non-blank line into its envelope.
 *
 * Guarantees: `ok` only for valid UTF-8 holding a JSON object with string `id`, `timestamp`,
 * `type` and a `data` key; else an `INVALID_UTF8` or `CORRUPT_LINE` finding (severity error)
 * carrying `line` and `byteOffset`. Never throws.
 */
export function parseEventLine(bytes: Buffer, line: number, offset: number): LineParse {
  if (!isUtf8(bytes)) {
    return {
      ok: false,
      finding: {
        code: "INVALID_UTF8",
        severity: "error",
        message: `line ${line} (byte ${offset}) is not valid UTF-8`,
        line,
        byteOffset: offset,
        details: { length: bytes.length },
      },
    };
  }
  let value: unknown;
  let problem: string | undefined;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (e) {
    problem = `not JSON (${(e as Error).message})`;
  }
  if (problem === undefined) problem = envelopeProblem(value);
  if (problem !== undefined) {
    return {
      ok: false,
      finding: {
        code: "CORRUPT_LINE",
        severity: "error",
        message: `line ${line} (byte ${offset}): ${problem}`,
        line,
        byteOffset: offset,
        details: { length: bytes.length, preview: bytes.subarray(0, 80).toString("utf8") },
      },
    };
  }
  return { ok: true, event: value as JournalEvent };
}

/** Why `value` is not a journal envelope, or undefined when it is one. */
export function envelopeProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "not a JSON object";
  const o = value as Record<string, unknown>;
  if (typeof o.id !== "string") return "id is not a string";
  if (typeof o.timestamp !== "string") return "timestamp is not a string";
  if (typeof o.type !== "string") return "type is not a string";
  if (!("data" in o)) return "data is missing";
  return undefined;
}
