/**
 * One block of the extended diet: consecutive journal lines encoded as a shape per line plus typed
 * value streams (see `docs/extended-diet.md`, "Block record"). Pure and synchronous: the diet runs
 * it in worker threads, readers and restore in whatever thread reads.
 *
 * A line is encoded only when it is valid UTF-8, parses as a JSON object and
 * `JSON.stringify(JSON.parse(line)) === line`, which the encoder's walk proves token by token
 * against the line as it goes (`Encoder.event`); every other line (blank, corrupt, non-canonical
 * such as `1e5`, `-0`, `1.0`, duplicate keys, escapes like `\/`, the unterminated final fragment)
 * is stored verbatim, byte for byte.
 */
import {
  BLOCK_MAGIC, BLOCK_TARGET_BYTES, FIRST_COLUMN_STREAM, HOLE, PIECE_MIN_CHARS, SNAPSHOT_LINES, SNAPSHOT_STREAMS, STREAM, TEXT_MIN_CHARS,
  extError, firstColumnStream, snapColumnsAt,
} from "./format.js";
import { threadRebuilder, type WasmRebuilder } from "./rebuild-wasm.js";
import { zstdCompress, zstdDecodeExact, zstdDecodeInto } from "./zstd.js";

/** What the column pass of a block yields: every stream but TEXT/TEXTN compressed, and the text values in order. */
export interface ColumnBlock {
  /** Compressed streams by index (TEXT and TEXTN are empty placeholders, filled by `sealBlock`). */
  streams: Buffer[];
  rawSizes: number[];
  /** Escaped contents of the block's text values, in hole order, as UTF-8: value k is textBytes[textEnds[k - 1], textEnds[k]). */
  textBytes: Buffer;
  textEnds: number[];
  /** The same as strings (made when asked for: the writer works on the bytes). */
  readonly texts: string[];
  lines: number;
  /**
   * Cursor snapshots at lines SNAPSHOT_LINES, 2·SNAPSHOT_LINES, …: per snapshot T, prevRef, then
   * the byte positions of SNAPSHOT_STREAMS and of every column (prevRef, TEXT and TEXTN are
   * filled by `sealBlock`, which knows the pieces).
   */
  snaps: number[][];
  /** Text values before each snapshot's line. */
  snapTexts: number[];
  /** Complete lines that JSON.parse accepts (the manifest's totalEvents counts these). */
  events: number;
  encodedLines: number;
}

const ID_RE = /^(0|[1-9][0-9]{0,15})-([0-9a-z]{0,16})$/;

/**
 * An empty list of strings whose elements kind is already "any value" (PACKED_ELEMENTS): an empty
 * `[]` starts as small integers and changes its map at its first string, and the optimised column
 * pass, compiled against one block's arrays, was thrown away ("wrong map", "not a Smi") at the
 * next block's fresh ones and compiled again (5 times per worker, ~1.3 CPU-s of TurboFan per
 * 100 MB diet). Every list of the encoder comes from here, so all of them share one map.
 */
function strings(): string[] {
  const a = [""];
  a.pop();
  return a;
}

/** An empty list of objects with the same elements kind from the start (see `strings`). */
function objects<T extends object>(): T[] {
  const a = [{}] as T[];
  a.pop();
  return a;
}

/** One node of the per-type path trie: the column of its strings and of its numbers. */
interface PathNode {
  path: string;
  kids: Map<string, PathNode>;
  items: PathNode | null;
  s: number;
  n: number;
}

function node(path: string): PathNode {
  return { path, kids: new Map(), items: null, s: -1, n: -1 };
}

const keyLits = new Map<string, string>();
function keyLit(k: string): string {
  let v = keyLits.get(k);
  if (v === undefined) {
    v = `${JSON.stringify(k)}:`;
    if (keyLits.size < 100_000) keyLits.set(k, v);
  }
  return v;
}

const typeLits = new Map<string, string>();
function typeLit(t: string): string {
  let v = typeLits.get(t);
  if (v === undefined) {
    v = JSON.stringify(t);
    if (typeLits.size < 100_000) typeLits.set(t, v);
  }
  return v;
}

class Encoder {
  readonly streams: string[][] = [strings(), strings(), strings(), strings(), strings(), strings(), strings(), strings(), strings()];
  readonly verbatim: Buffer[] = objects<Buffer>();
  verbatimBytes = 0;
  readonly shapes = new Map<string, number>();
  readonly shapeCols: number[][] = objects<number[]>();
  readonly cols: string[] = strings();
  readonly colValues: string[][] = [];
  readonly roots = new Map<string, PathNode>();
  /**
   * The text values' escaped contents as UTF-8, one after the other (value k ends at
   * textEnds[k]): copied from the block's bytes when the line is ASCII, else written from the
   * string. (Kept as strings, every body survived the young generation twice.) A content is a
   * slice of its line, so the block's size bounds them all.
   */
  readonly textBytes: Buffer;
  textLen = 0;
  readonly textEnds: number[] = [];
  /** The line's first byte in the block, and whether its bytes are its characters (ASCII). */
  lineAt = 0;
  ascii = false;
  prevTime = 0;
  // Per line:
  tpl = "";
  lineCols: number[] = [];
  type = "";
  /** The line being proven and walked, and the walk's position in it: where the next token starts. */
  line = "";
  pos = 0;
  /** The first `\` of the line at or after `bsFrom` (-1: none), found once and reused (one scan per line). */
  bs = -1;
  bsFrom = 0;
  /** The nodes whose column this line's walk created, and which (undone when the line stays verbatim). */
  created: PathNode[] = objects<PathNode>();
  createdKind: ("s" | "n")[] = strings() as ("s" | "n")[];

  constructor(private readonly input: Buffer) {
    this.textBytes = Buffer.allocUnsafeSlow(Math.max(1, input.length));
  }

  newCol(name: string, at: PathNode, kind: "s" | "n"): number {
    const c = this.cols.length;
    this.cols.push(name);
    this.colValues.push(strings());
    this.created.push(at);
    this.createdKind.push(kind);
    at[kind] = c;
    return c;
  }

  /** Does the line hold `lit` at the cursor? Then the cursor moves past it. */
  lit(lit: string): boolean {
    if (!this.line.startsWith(lit, this.pos)) return false;
    this.pos += lit.length;
    this.tpl += lit;
    return true;
  }

  /** Does the line hold the one character `c` at the cursor? */
  ch(c: number, s: string): boolean {
    if (this.line.charCodeAt(this.pos) !== c) return false;
    this.pos++;
    this.tpl += s;
    return true;
  }

  /** The line's next `\` at or after `from` (-1: none). */
  backslash(from: number): number {
    if (from < this.bsFrom || (this.bs >= 0 && this.bs < from)) {
      this.bs = this.line.indexOf("\\", from);
      this.bsFrom = from;
    }
    return this.bs;
  }

  /**
   * The escaped content of the string token at the cursor, whose parsed value is `x`, when that
   * token is the one `JSON.stringify(x)` writes (null otherwise); the cursor moves past it. The
   * token ends at the first `"` not escaped (after an even run of backslashes). Without a `\`
   * in it, its content is `x` itself (checked by its length); with one, every escape must be
   * one `JSON.stringify` writes: `\"` `\\` `\b` `\f` `\n` `\r` `\t`, `\u00xx` (lowercase) for
   * the other control characters and `\udxxx` (lowercase) for a lone surrogate. That the decoded
   * content is `x` follows from the whole line's check (see `event`).
   */
  string(x: string): string | null {
    const s = this.line;
    const open = this.pos;
    if (s.charCodeAt(open) !== 0x22) return null;
    let close = s.indexOf('"', open + 1);
    if (close < 0) return null;
    const b = this.backslash(open + 1);
    if (b < 0 || b > close) {
      if (close - open - 1 !== x.length) return null;
      this.pos = close + 1;
      return x;
    }
    close = closingQuote(s, close);
    if (close < 0 || !canonicalEscapes(s, b, close)) return null;
    this.pos = close + 1;
    return s.slice(open + 1, close);
  }

  str(x: string, at: PathNode): boolean {
    const content = this.string(x);
    if (content === null) return false;
    if (content.length >= TEXT_MIN_CHARS) {
      if (this.ascii) {
        // The content is line[pos - 1 - length, pos - 1): the same bytes in the block.
        const from = this.lineAt + this.pos - 1 - content.length;
        this.textLen += this.input.copy(this.textBytes, this.textLen, from, from + content.length);
      } else {
        this.textLen += this.textBytes.write(content, this.textLen, "utf8");
      }
      this.textEnds.push(this.textLen);
      this.tpl += HOLE.TEXT;
      return true;
    }
    const c = at.s >= 0 ? at.s : this.newCol(`s${this.type}\u0000${at.path}`, at, "s");
    this.colValues[c].push(content);
    this.lineCols.push(c);
    this.tpl += HOLE.STRING;
    return true;
  }

  walk(x: unknown, at: PathNode): boolean {
    if (typeof x === "string") return this.str(x, at);
    if (typeof x === "number") {
      const t = String(x);
      if (!this.line.startsWith(t, this.pos)) return false;
      this.pos += t.length;
      const c = at.n >= 0 ? at.n : this.newCol(`n${this.type}\u0000${at.path}`, at, "n");
      this.colValues[c].push(t);
      this.lineCols.push(c);
      this.tpl += HOLE.NUMBER;
      return true;
    }
    if (x === null) return this.lit("null");
    if (typeof x === "boolean") return this.lit(x ? "true" : "false");
    if (Array.isArray(x)) {
      if (!this.ch(0x5b, "[")) return false;
      const items = (at.items ??= node(`${at.path}[]`));
      for (let i = 0; i < x.length; i++) {
        if (i > 0 && !this.ch(0x2c, ",")) return false;
        if (!this.walk(x[i], items)) return false;
      }
      return this.ch(0x5d, "]");
    }
    return this.object(x as Record<string, unknown>, at);
  }

  object(o: Record<string, unknown>, at: PathNode): boolean {
    if (!this.ch(0x7b, "{")) return false;
    let first = true;
    for (const k in o) {
      if (!first && !this.ch(0x2c, ",")) return false;
      first = false;
      if (!this.lit(keyLit(k))) return false;
      let kid = at.kids.get(k);
      if (kid === undefined) {
        kid = node(`${at.path}.${k}`);
        at.kids.set(k, kid);
      }
      if (!this.walk(o[k], kid)) return false;
    }
    return this.ch(0x7d, "}");
  }

  /**
   * Encode the event object `v` parsed from `line` when the walk proves that the template filled
   * with the values is `line`, byte for byte (top level: typed id and timestamp, type in the
   * template); 0 (and nothing changed) when it is not. The walk is the invertibility proof: it
   * checks every token it would write against the line at the cursor (punctuation, key literals,
   * `String(n)` for numbers, literals, each string token's span and escapes) and that it ends at
   * the line's end. The line parsed, so it is a sequence of JSON tokens; each check matches one
   * whole token of it (a number or literal is followed by `,` `}` or `]`, which no number or
   * literal contains), so the line has exactly the walk's tokens: the same structure and keys,
   * hence no duplicate keys, so each of its string tokens parsed to the value the walk took for
   * it, written with `JSON.stringify`'s escapes, i.e. the walk's token. (It was `JSON.stringify(v)
   * === line` before the walk: a second serialisation of every line.)
   */
  event(v: Record<string, unknown>, line: string, lineAt = 0, ascii = false): number {
    this.line = line;
    this.lineAt = lineAt;
    this.ascii = ascii;
    this.pos = 0;
    this.bs = -1;
    this.bsFrom = line.length + 1;
    this.tpl = "";
    this.lineCols.length = 0;
    this.created.length = 0;
    this.createdKind.length = 0;
    const ids = this.streams[STREAM.ID_MS].length;
    const tss = this.streams[STREAM.TS].length;
    const texts = this.textEnds.length;
    const prevTime = this.prevTime;
    let ok = false;
    try {
      ok = this.top(v);
    } catch (e) {
      // Nesting deeper than the stack: the line stays verbatim.
      if (!(e instanceof RangeError)) throw e;
    }
    if (ok && this.pos === line.length) {
      let s = this.shapes.get(this.tpl);
      if (s === undefined) {
        s = this.shapes.size + 1;
        this.shapes.set(this.tpl, s);
        this.shapeCols.push(this.lineCols);
        this.lineCols = [];
      }
      return s;
    }
    // Not proven: undo the walk's values and columns.
    for (const c of this.lineCols) this.colValues[c].pop();
    for (let k = 0; k < this.created.length; k++) this.created[k][this.createdKind[k]] = -1;
    this.cols.length -= this.created.length;
    this.colValues.length = this.cols.length;
    this.streams[STREAM.ID_MS].length = ids;
    this.streams[STREAM.ID_RAND].length = ids;
    this.streams[STREAM.TS].length = tss;
    this.textEnds.length = texts;
    this.textLen = texts > 0 ? this.textEnds[texts - 1] : 0;
    this.prevTime = prevTime;
    return 0;
  }

  private top(v: Record<string, unknown>): boolean {
    this.type = typeof v.type === "string" ? v.type : "";
    let root = this.roots.get(this.type);
    if (root === undefined) {
      root = node("");
      this.roots.set(this.type, root);
    }
    if (!this.ch(0x7b, "{")) return false;
    let first = true;
    for (const k in v) {
      if (!first && !this.ch(0x2c, ",")) return false;
      first = false;
      if (!this.lit(keyLit(k))) return false;
      const x = v[k];
      if (typeof x === "string" && (k === "id" || k === "timestamp" || k === "type")) {
        // Ids, timestamps and types as they are typed below need no escape: their token is `"x"`.
        const t = this.pos;
        if (k === "type") {
          if (!this.lit(typeLit(x))) return false;
          continue;
        }
        const quoted = this.line.charCodeAt(t) === 0x22 && this.line.startsWith(x, t + 1) && this.line.charCodeAt(t + 1 + x.length) === 0x22;
        if (quoted && (k === "id" ? this.id(x) : this.timestamp(x))) {
          this.pos = t + x.length + 2;
          continue;
        }
      }
      let kid = root.kids.get(k);
      if (kid === undefined) {
        kid = node(`.${k}`);
        root.kids.set(k, kid);
      }
      if (!this.walk(x, kid)) return false;
    }
    return this.ch(0x7d, "}");
  }

  id(x: string): boolean {
    const m = ID_RE.exec(x);
    if (m === null) return false;
    const ms = Number(m[1]);
    if (!Number.isSafeInteger(ms)) return false;
    this.streams[STREAM.ID_MS].push(String(ms - this.prevTime));
    this.streams[STREAM.ID_RAND].push(m[2]);
    this.prevTime = ms;
    this.tpl += HOLE.ID;
    return true;
  }

  timestamp(x: string): boolean {
    if (x.length !== 24) return false;
    // Most timestamps are the id's millisecond: one cached comparison instead of a parse.
    if (x === isoOf(this.prevTime)) {
      this.streams[STREAM.TS].push("0");
      this.tpl += HOLE.TIMESTAMP;
      return true;
    }
    const t = Date.parse(x);
    if (!Number.isFinite(t) || new Date(t).toISOString() !== x) return false;
    this.streams[STREAM.TS].push(String(t - this.prevTime));
    this.tpl += HOLE.TIMESTAMP;
    return true;
  }
}

/** The byte position in a list stream of `values` after the first counts[j] values, for each j (counts non-decreasing). */
function offsetsAt(values: string[], counts: number[]): number[] {
  const out: number[] = new Array(counts.length);
  let bytes = 0;
  let i = 0;
  for (let j = 0; j < counts.length; j++) {
    for (; i < counts[j]; i++) bytes += Buffer.byteLength(values[i]) + 1;
    out[j] = bytes;
  }
  return out;
}

/** The index of the `"` that closes the JSON string whose content contains index `from` (or starts there). */
function closingQuote(s: string, from: number): number {
  for (let q = s.indexOf('"', from); q >= 0; q = s.indexOf('"', q + 1)) {
    let k = q - 1;
    while (s.charCodeAt(k) === 0x5c) k--;
    if (((q - 1 - k) & 1) === 0) return q;
  }
  return -1;
}

/** The 4 hex digits at `at` as `JSON.stringify` writes them (lowercase), or -1. */
function lowerHex4(s: string, at: number): number {
  let v = 0;
  for (let i = at; i < at + 4; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) v = v * 16 + c - 0x30;
    else if (c >= 0x61 && c <= 0x66) v = v * 16 + c - 0x57;
    else return -1;
  }
  return v;
}

/**
 * Are all escapes of the string content `s[from, to)` (from: its first `\`) the ones
 * `JSON.stringify` writes? The short ones for `"` `\\` and \b \f \n \r \t; `\u00xx` (lowercase)
 * for the other characters below U+0020; `\udxxx` (lowercase) for a surrogate only when it is
 * lone: a high one not followed by an escaped low one (the line is well-formed UTF-16 decoded
 * from UTF-8, so no raw character is a lone surrogate; and a low escape right after a high
 * escape was refused at the high one). Any other escape (`\/`, `\u0041`, `\u000a`, uppercase
 * hex, an escaped pair) is one `JSON.stringify` would not write. Unescaped characters are always
 * written as they are: the line parsed, so it holds no raw control character, `"` or `\`.
 */
function canonicalEscapes(s: string, from: number, to: number): boolean {
  for (let i = from; i >= 0 && i < to; i = s.indexOf("\\", i)) {
    const c = s.charCodeAt(i + 1);
    if (c === 0x6e || c === 0x22 || c === 0x5c || c === 0x74 || c === 0x72 || c === 0x62 || c === 0x66) {
      i += 2;
      continue;
    }
    if (c !== 0x75) return false;
    const v = lowerHex4(s, i + 2);
    if (v < 0) return false;
    if (v < 0x20) {
      if (v === 0x08 || v === 0x09 || v === 0x0a || v === 0x0c || v === 0x0d) return false;
    } else if (v >= 0xd800 && v <= 0xdbff) {
      if (s.charCodeAt(i + 6) === 0x5c && s.charCodeAt(i + 7) === 0x75) {
        const w = Number.parseInt(s.slice(i + 8, i + 12), 16);
        if (w >= 0xdc00 && w <= 0xdfff) return false;
      }
    } else if (v < 0xdc00 || v > 0xdfff) return false;
    i += 6;
  }
  return true;
}

/** Values joined with a `\n` after each (an empty list is an empty stream). */
export function joined(values: string[]): Buffer {
  return values.length === 0 ? Buffer.alloc(0) : Buffer.from(`${values.join("\n")}\n`, "utf8");
}

/** Lines of a block: its `\n`s, plus one for an unterminated final fragment. */
function countLines(input: Buffer, endsWithNewline: boolean): number {
  let n = 0;
  for (let at = input.indexOf(0x0a); at >= 0; at = input.indexOf(0x0a, at + 1)) n++;
  return endsWithNewline || input.length === 0 ? n : n + 1;
}

/**
 * The column pass over `input` (whole lines; only the journal's last block may end without `\n`,
 * and that fragment stays verbatim): every stream but the text streams, compressed at `level`.
 */
export function encodeColumns(input: Buffer, level: number): ColumnBlock {
  const e = new Encoder(input);
  const endsWithNewline = input.length > 0 && input[input.length - 1] === 0x0a;
  const lines = countLines(input, endsWithNewline);
  const rows: string[] = new Array(lines);
  const lens: string[] = new Array(lines);
  let pos = 0;
  let events = 0;
  let encoded = 0;
  const snapT: number[] = [];
  const snapVerb: number[] = [];
  const snapIds: number[] = [];
  const snapTs: number[] = [];
  const snapCols: number[][] = [];
  const snapTexts: number[] = [];
  const snapRows: number[] = [];
  const snapLens: number[] = [];
  const snapOffsets: number[] = [];
  let rowBytes = 0;
  let lenBytes = 0;
  for (let i = 0; i < lines; i++) {
    if (i > 0 && i % SNAPSHOT_LINES === 0) {
      snapRows.push(rowBytes);
      snapLens.push(lenBytes);
      snapOffsets.push(pos);
      snapT.push(e.prevTime);
      snapVerb.push(e.verbatimBytes);
      snapIds.push(e.streams[STREAM.ID_MS].length);
      snapTs.push(e.streams[STREAM.TS].length);
      snapCols.push(e.colValues.map((v) => v.length));
      snapTexts.push(e.textEnds.length);
    }
    const nl = input.indexOf(0x0a, pos);
    const end = nl < 0 ? input.length : nl;
    const terminated = nl >= 0;
    // Decoded line by line, not as one block string: one non-ASCII character would make the
    // whole block's string (and every value sliced from it) two-byte, twice the bytes to parse,
    // hash and copy to the main thread (measured: docs/extended-diet.md, "Diet speed").
    const s = input.toString("utf8", pos, end);
    lens[i] = String(end - pos);
    let shape = 0;
    if (s.length > 0) {
      let v: unknown;
      let parsed = false;
      try {
        v = JSON.parse(s);
        parsed = true;
      } catch {
        parsed = false;
      }
      if (parsed && terminated) events++;
      if (parsed && terminated && typeof v === "object" && v !== null && !Array.isArray(v)
        && (!s.includes("\uFFFD") || input.subarray(pos, end).equals(Buffer.from(s, "utf8")))) {
        shape = e.event(v as Record<string, unknown>, s, pos, s.length === end - pos);
        if (shape > 0) encoded++;
      }
    }
    if (shape === 0) {
      e.verbatim.push(input.subarray(pos, end), NL);
      e.verbatimBytes += end - pos + 1;
    }
    rows[i] = String(shape);
    rowBytes += rows[i].length + 1;
    lenBytes += lens[i].length + 1;
    pos = end + 1;
  }
  return columnStreams(e, level, lines, rows, lens, events, encoded, {
    t: snapT, verb: snapVerb, ids: snapIds, ts: snapTs, cols: snapCols, texts: snapTexts, rows: snapRows, lens: snapLens, offsets: snapOffsets,
  });
}

/** The positions `encodeColumns` recorded before each snapshot's line. */
interface SnapAt {
  t: number[];
  verb: number[];
  ids: number[];
  ts: number[];
  cols: number[][];
  texts: number[];
  rows: number[];
  lens: number[];
  offsets: number[];
}

/**
 * The end of `encodeColumns`, once per block: the streams, snapshots and compression. Its own
 * function so that the line loop's optimised code holds none of it (compiled on the first block,
 * before this part had ever run, it had no feedback for it and was thrown away on leaving the
 * loop).
 */
function columnStreams(e: Encoder, level: number, lines: number, rows: string[], lens: string[], events: number, encoded: number, at: SnapAt): ColumnBlock {
  const shapes: string[] = [JSON.stringify(e.cols)];
  let k = 0;
  // One JSON value per line (JSON.stringify never emits a raw newline): the column names, then shape k on line k.
  for (const tpl of e.shapes.keys()) shapes.push(JSON.stringify([tpl, e.shapeCols[k++]]));
  const idMsAt = offsetsAt(e.streams[STREAM.ID_MS], at.ids);
  const idRandAt = offsetsAt(e.streams[STREAM.ID_RAND], at.ids);
  const tsAt = offsetsAt(e.streams[STREAM.TS], at.ts);
  const colAt: number[][] = [];
  for (let c = 0; c < e.colValues.length; c++) {
    const counts: number[] = new Array(at.cols.length);
    for (let j = 0; j < counts.length; j++) counts[j] = at.cols[j][c] ?? 0;
    colAt.push(offsetsAt(e.colValues[c], counts));
  }
  const snaps: number[][] = [];
  for (let j = 0; j < at.t.length; j++) {
    const snap = [at.t[j], -1, at.verb[j], idMsAt[j], idRandAt[j], tsAt[j], 0, 0, at.rows[j], at.lens[j], at.offsets[j]];
    for (let c = 0; c < colAt.length; c++) snap.push(colAt[c][j]);
    snaps.push(snap);
  }
  const raw: Buffer[] = new Array(FIRST_COLUMN_STREAM + e.cols.length);
  raw[STREAM.META] = joined(shapes);
  raw[STREAM.ROWS] = joined(rows);
  raw[STREAM.LINELEN] = joined(lens);
  raw[STREAM.VERBATIM] = Buffer.concat(e.verbatim);
  for (const st of [STREAM.ID_MS, STREAM.ID_RAND, STREAM.TS]) raw[st] = joined(e.streams[st]);
  raw[STREAM.TEXT] = Buffer.alloc(0);
  raw[STREAM.TEXTN] = Buffer.alloc(0);
  raw[STREAM.SNAP] = Buffer.alloc(0);
  for (let c = 0; c < e.cols.length; c++) raw[FIRST_COLUMN_STREAM + c] = joined(e.colValues[c]);
  return {
    streams: raw.map((r) => (r.length === 0 ? r : zstdCompress(r, level))),
    rawSizes: raw.map((r) => r.length),
    textBytes: e.textBytes.subarray(0, e.textLen),
    textEnds: e.textEnds,
    get texts() {
      return this.textEnds.map((to, k) => this.textBytes.toString("utf8", k > 0 ? this.textEnds[k - 1] : 0, to));
    },
    lines,
    snaps,
    snapTexts: at.texts,
    events,
    encodedLines: encoded,
  };
}

/** The text streams of a block's text values (`textStreamsOf`), and where each snapshot is in them. */
export interface TextStreams {
  text: Buffer;
  textn: Buffer;
  refs: number;
  snapText: number[];
  snapTextN: number[];
  snapPrev: number[];
}

/**
 * The long pieces of a block's text values (PIECE_MIN_CHARS or more UTF-16 units, the ones
 * the pack stores once), in order, as the writing thread's dedupe needs them: the
 * texts' UTF-8 bytes (one write per text value), where piece k is `bytes[starts[k], ends[k])`,
 * and a 30-bit hash of each (FNV-1a over its bytes from `seed`; a hash only picks the
 * candidates, the bytes decide). The pieces are found in the bytes as `split("\\n")` finds them
 * in the string (left to right, the two bytes `\` `n`: UTF-8 never has ASCII bytes inside a
 * multi-byte character); a piece's UTF-16 length is its byte length when it is ASCII, else it
 * is counted from its bytes. (One write per piece after a split cost 0.3 CPU-s per 100 MB.)
 */
export interface LongPieces {
  bytes: Buffer;
  starts: Uint32Array;
  ends: Uint32Array;
  hashes: Int32Array;
}

/** UTF-16 units of the valid UTF-8 `b[from, to)`: one per character, two from 4-byte characters. */
function utf16Units(b: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const x = b[i];
    if ((x & 0xc0) !== 0x80) n += x >= 0xf0 ? 2 : 1;
  }
  return n;
}

/**
 * `longPieces` of the text values `bytes[ends[k - 1], ends[k])` (a block's `textBytes` and
 * `textEnds`); the result's bytes are a copy in their own ArrayBuffer (not Buffer's shared pool:
 * they are transferred to the writing thread, the block keeps its own).
 */
export function longPiecesOf(src: Buffer, valueEnds: ArrayLike<number>, seed: number, cuts?: PieceCuts): LongPieces {
  const bytes = src.length === 0 ? Buffer.alloc(0) : Buffer.allocUnsafeSlow(src.length);
  src.copy(bytes);
  const n = cutPieces(bytes, valueEnds, seed, cuts !== undefined);
  if (cuts !== undefined) {
    cuts.ends = cutScratch.ends.slice(0, cutScratch.all);
    cuts.long = cutScratch.long.slice(0, cutScratch.all);
  }
  return { bytes, starts: cutScratch.starts.slice(0, n), ends: cutScratch.ends2.slice(0, n), hashes: cutScratch.hashes.slice(0, n) };
}

/**
 * `longPiecesOf`'s arrays, kept by the thread from block to block and copied out: grown from 1,024
 * entries in every block, each growth was code that the on-stack compiled loop had not seen yet
 * (a deoptimisation and a new compile, 8 per worker per 100 MB diet).
 */
const cutScratch = {
  ends: new Uint32Array(1024), long: new Uint8Array(1024), all: 0,
  starts: new Uint32Array(1024), ends2: new Uint32Array(1024), hashes: new Int32Array(1024),
};

/** The loop of `longPiecesOf` (its own function: see `columnStreams`), into `cutScratch`; returns the number of long pieces. */
function cutPieces(bytes: Buffer, valueEnds: ArrayLike<number>, seed: number, withCuts: boolean): number {
  const sc = cutScratch;
  let all = 0;
  let n = 0;
  let at = 0;
  for (let v = 0; v < valueEnds.length; v++) {
    const end = valueEnds[v];
    let from = at;
    let h = seed | 0;
    let wide = 0;
    for (let i = at; ; ) {
      // The piece's bytes up to a `\` (one compare per byte in the common case).
      let x = 0;
      while (i < end && (x = bytes[i]) !== 0x5c) {
        h = Math.imul(h ^ x, 0x01000193);
        wide |= x;
        i++;
      }
      if (i < end && !(i + 1 < end && bytes[i + 1] === 0x6e)) {
        // A `\` that does not start `\n` belongs to the piece.
        h = Math.imul(h ^ 0x5c, 0x01000193);
        i++;
        continue;
      }
      // The piece [from, i) ends here (at a `\n` or the value's end).
      const len = i - from;
      const long = len >= PIECE_MIN_CHARS && (wide < 0x80 || utf16Units(bytes, from, i) >= PIECE_MIN_CHARS);
      if (withCuts) {
        if (all === sc.ends.length) growCuts(sc);
        sc.ends[all] = i;
        sc.long[all++] = long ? 1 : 0;
      }
      if (long) {
        if (n === sc.starts.length) growLong(sc);
        h = Math.imul(h ^ len, 0x01000193);
        sc.starts[n] = from;
        sc.ends2[n] = i;
        sc.hashes[n] = (h ^ (h >>> 15)) & 0x3fffffff;
        n++;
      }
      if (i >= end) break;
      i += 2; // past the `\n`
      from = i;
      h = seed | 0;
      wide = 0;
    }
    at = end;
  }
  sc.all = all;
  return n;
}

function growCuts(sc: typeof cutScratch): void {
  const cap = 2 * sc.ends.length;
  sc.ends = grown(sc.ends, cap);
  const l = new Uint8Array(cap);
  l.set(sc.long);
  sc.long = l;
}

function growLong(sc: typeof cutScratch): void {
  const cap = 2 * sc.starts.length;
  sc.starts = grown(sc.starts, cap);
  sc.ends2 = grown(sc.ends2, cap);
  sc.hashes = grown(sc.hashes, cap);
}

/** Every piece of a block's text values in order (`longPiecesOf` finds them): where it ends, and whether it is long (1). */
export interface PieceCuts {
  ends: Uint32Array;
  long: Uint8Array;
}

/** Write the decimal digits of the integer `n` at `at`; returns the position after them. */
function writeInt(out: Buffer, at: number, n: number): number {
  if (n < 0) {
    out[at++] = 0x2d;
    n = -n;
  }
  if (n < 10) {
    out[at] = 0x30 + n;
    return at + 1;
  }
  return at + out.write(String(n), at, "latin1");
}

let textScratch: Buffer | null = null;

/**
 * The TEXT and TEXTN streams of the text values `bytes[ends[k - 1], ends[k])` (the tests' oracle is
 * `textStreams` of test-helpers.ts, the same encoding over strings), given the pack's ids of their
 * long pieces in order: the same bytes, written straight from the text bytes, piece by piece as
 * `longPiecesOf` cut them (`cuts`, recorded in its byte loop; found again when not given: a
 * native search per separator cost 0.2 CPU-s per worker per 100 MB).
 */
export function textStreamsOf(bytes: Buffer, valueEnds: ArrayLike<number>, ids: ArrayLike<number>, snapTexts: number[] = [], cuts?: PieceCuts): TextStreams {
  if (cuts === undefined) {
    cuts = { ends: new Uint32Array(0), long: new Uint8Array(0) };
    longPiecesOf(bytes, valueEnds, 0, cuts);
  }
  // Each piece: its bytes + 2 (short) or at most 12 bytes for a piece of 16 or more; separators are 2 bytes.
  const bound = 2 * bytes.length + 2 * valueEnds.length + 16;
  if (textScratch === null || textScratch.length < bound) textScratch = Buffer.allocUnsafeSlow(Math.max(bound, 1 << 20));
  const counts: string[] = new Array(valueEnds.length);
  const t: TextStreams = { text: textScratch, textn: textScratch, refs: 0, snapText: [], snapTextN: [], snapPrev: [] };
  const [o, j] = writeText(textScratch, bytes, valueEnds, ids, snapTexts, cuts, counts, t);
  if (t.refs !== ids.length || j !== cuts.ends.length) throw new Error(`textStreamsOf: ${ids.length} ids for ${t.refs} pieces`);
  // TEXT is a view of this thread's scratch space: compressed by `sealBlock` before the next call.
  t.text = textScratch.subarray(0, o);
  t.textn = joined(counts);
  return t;
}

/**
 * The loop of `textStreamsOf` (its own function: see `columnStreams`): TEXT into `out`, the
 * pieces' counts into `counts`, the snapshots' positions and `refs` into `t`; returns TEXT's
 * length and the cuts used.
 */
function writeText(out: Buffer, bytes: Buffer, valueEnds: ArrayLike<number>, ids: ArrayLike<number>, snapTexts: number[], cuts: PieceCuts, counts: string[], t: TextStreams): [number, number] {
  const cutEnds = cuts.ends;
  const cutLong = cuts.long;
  let o = 0;
  let textnBytes = 0;
  let prev = -1;
  let k = 0;
  let sj = 0;
  let j = 0;
  let at = 0;
  for (let v = 0; v <= valueEnds.length; v++) {
    while (sj < snapTexts.length && snapTexts[sj] === v) {
      t.snapText.push(o);
      t.snapTextN.push(textnBytes);
      t.snapPrev.push(prev);
      sj++;
    }
    if (v === valueEnds.length) break;
    const end = valueEnds[v];
    let pieces = 0;
    for (let from = at; ; ) {
      const to = cutEnds[j];
      pieces++;
      if (cutLong[j++] === 1) {
        if (k >= ids.length) throw new Error(`textStreamsOf: ${ids.length} ids for more pieces`);
        const id = ids[k++];
        o = writeInt(out, o, id - prev - 1);
        prev = id;
      } else {
        out[o++] = 0x27;
        for (let i = from; i < to; i++) out[o++] = bytes[i];
      }
      out[o++] = 0x0a;
      if (to >= end) break;
      from = to + 2;
    }
    counts[v] = String(pieces);
    textnBytes += counts[v].length + 1;
    at = end;
  }
  t.refs = k;
  return [o, j];
}

function grown<T extends Uint32Array | Int32Array>(a: T, cap: number): T {
  const b = new (a.constructor as new (n: number) => T)(cap);
  b.set(a);
  return b;
}

/** The text streams and `sealBlock` with the pack's ids of the block's long pieces known (in order). */
export function sealWithIds(c: ColumnBlock, ids: ArrayLike<number>, level: number, cuts?: PieceCuts): Buffer {
  return sealBlock(c, textStreamsOf(c.textBytes, c.textEnds, ids, c.snapTexts, cuts), level);
}

/**
 * The SNAP stream (version 3), column-major: line v holds value v of every snapshot, comma
 * separated, each as the delta from the previous snapshot's (the first from T 0, prevRef −1,
 * positions and offset 0). No snapshots: an empty stream.
 */
export function snapStream(snaps: number[][]): Buffer {
  if (snaps.length === 0) return Buffer.alloc(0);
  const out: string[] = [];
  for (let v = 0; v < snaps[0].length; v++) {
    const d: number[] = new Array(snaps.length);
    for (let j = 0; j < snaps.length; j++) d[j] = snaps[j][v] - (j > 0 ? snaps[j - 1][v] : v === 1 ? -1 : 0);
    out.push(d.join(","));
  }
  return joined(out);
}

/** The block record: the column pass's streams plus the text streams compressed at `level`. */
export function sealBlock(c: ColumnBlock, t: TextStreams, level: number): Buffer {
  const { text, textn } = t;
  for (let j = 0; j < c.snaps.length; j++) {
    c.snaps[j][1] = t.snapPrev[j];
    c.snaps[j][6] = t.snapText[j];
    c.snaps[j][7] = t.snapTextN[j];
  }
  const snap = snapStream(c.snaps);
  c.streams[STREAM.SNAP] = snap.length === 0 ? snap : zstdCompress(snap, level);
  c.rawSizes[STREAM.SNAP] = snap.length;
  c.streams[STREAM.TEXT] = text.length === 0 ? text : zstdCompress(text, level);
  c.rawSizes[STREAM.TEXT] = text.length;
  c.streams[STREAM.TEXTN] = textn.length === 0 ? textn : zstdCompress(textn, level);
  c.rawSizes[STREAM.TEXTN] = textn.length;
  return packRecord(c.streams, c.rawSizes);
}

const NL = Buffer.from("\n");

/** u32 magic, u32 count, count × {u32 compressed, u32 raw}, then the compressed streams (an empty stream has no frame). */
function packRecord(z: Buffer[], raw: number[]): Buffer {
  const head = Buffer.alloc(8 + 8 * z.length);
  head.writeUInt32LE(BLOCK_MAGIC, 0);
  head.writeUInt32LE(z.length, 4);
  for (let s = 0; s < z.length; s++) {
    head.writeUInt32LE(z[s].length, 8 + 8 * s);
    head.writeUInt32LE(raw[s], 12 + 8 * s);
  }
  return Buffer.concat([head, ...z]);
}

/**
 * Decompress the streams of a record (all of them, or those `want` accepts; the others are null);
 * EXT_CORRUPT when anything does not fit. `minStreams`: 9 (version 1) or 10 (version 2).
 */
export function unpackRecord(record: Buffer, path?: string, want?: (s: number) => boolean, minStreams = FIRST_COLUMN_STREAM, scratch?: Scratch): (Buffer | null)[] {
  const bad = (why: string) => extError("EXT_CORRUPT", `a block record is corrupt: ${why}`, path);
  if (record.length < 8 || record.readUInt32LE(0) !== BLOCK_MAGIC) throw bad("no block magic");
  const n = record.readUInt32LE(4);
  if (n < minStreams || 8 + 8 * n > record.length) throw bad("stream table");
  const out: (Buffer | null)[] = new Array(n);
  let at = 8 + 8 * n;
  for (let s = 0; s < n; s++) {
    const z = record.readUInt32LE(8 + 8 * s);
    const size = record.readUInt32LE(12 + 8 * s);
    if (at + z > record.length || (z === 0) !== (size === 0)) throw bad(`stream ${s} does not fit`);
    if (want !== undefined && !want(s)) out[s] = null;
    else if (size === 0) out[s] = EMPTY;
    else {
      const zs = record.subarray(at, at + z);
      const d = scratch === undefined ? zstdDecodeExact(zs, size) : scratch.take(size);
      if (d === null || (scratch !== undefined && !zstdDecodeInto(zs, d))) throw bad(`stream ${s} does not decode to its ${size} bytes`);
      out[s] = d;
    }
    at += z;
  }
  if (at !== record.length) throw bad("trailing bytes");
  return out;
}

const EMPTY = Buffer.alloc(0);

/**
 * What reading a record of `recordBytes` and decoding all its streams takes from a wasm Scratch
 * (the record, then each non-empty stream, padded), from the record's first bytes `head` (its
 * magic, count and stream table; `head` may be shorter than the table: null, as for a record that
 * is not one, whose decode then reports it).
 */
export function wholeDecodeBytes(head: Buffer, recordBytes: number): number | null {
  if (head.length < 8 || head.readUInt32LE(0) !== BLOCK_MAGIC) return null;
  const n = head.readUInt32LE(4);
  if (8 + 8 * n > head.length) return null;
  let bytes = padded(recordBytes);
  for (let s = 0; s < n; s++) {
    const size = head.readUInt32LE(12 + 8 * s);
    if (size > 0) bytes += padded(size);
  }
  return bytes;
}

/** The kernel's output region (its lines are copied out as it fills; a longer line gets a region its size). */
let outChunk = 1 << 20;
/** Tests: a small output region, so that a small block takes many kernel calls; returns the previous size. */
export function setKernelOutChunk(bytes: number): number {
  const was = outChunk;
  outChunk = bytes;
  return was;
}

/** `n` rounded up to 16, plus 16 bytes of slack (the kernel reads and writes 16 bytes at a time). */
function padded(n: number): number {
  return ((n + 15) & ~15) + 16;
}

/**
 * Reused memory for one decode at a time (a block's record and its decoded streams): views taken
 * from it stay valid until the next `reset`, so a decoder that reads block after block makes no
 * garbage for them (external memory is collected late: at 1 GB it was most of restore's RSS).
 */
export class Scratch {
  private buf: Buffer = Buffer.alloc(0);
  private used = 0;
  /** In the WebAssembly rebuilder's memory: the region's address and size, and the most a block took. */
  private addr = -1;
  private cap = 0;
  private peak = 0;

  /**
   * `wasm`: take the memory from the rebuilder (its kernel then reads the streams where they are),
   * 16 bytes of slack after each view. The region only grows at a reset (a grow moves the memory
   * and would detach the views still in use); a take that does not fit until then is a plain buffer.
   */
  constructor(private readonly wasm: WasmRebuilder | null = null) {}

  reset(): void {
    this.used = 0;
    const w = this.wasm;
    if (w !== null && this.peak > this.cap) {
      if (this.addr >= 0) w.free(this.addr);
      this.cap = this.peak + (this.peak >> 3);
      this.addr = w.alloc(this.cap);
    }
  }

  /**
   * Right after a reset, before any take: make the region hold `bytes` of takes (their padding
   * included: see `wholeDecodeBytes`), so a job larger than every earlier one gets all its views in
   * the rebuilder's memory rather than plain buffers. The one alloc happens before any view exists.
   */
  fit(bytes: number): void {
    const w = this.wasm;
    this.peak = Math.max(this.peak, bytes);
    if (w === null || this.used !== 0 || bytes <= this.cap) return;
    if (this.addr >= 0) w.free(this.addr);
    this.cap = bytes + (bytes >> 3);
    this.addr = w.alloc(this.cap);
  }

  /** `n` bytes (uninitialised) valid until the next reset. */
  take(n: number): Buffer {
    const w = this.wasm;
    if (w !== null) {
      const at = this.used;
      this.used += padded(n);
      this.peak = Math.max(this.peak, this.used);
      return this.used <= this.cap ? Buffer.from(w.u8.buffer, this.addr + at, n) : Buffer.allocUnsafeSlow(n);
    }
    if (this.used + n > this.buf.length) {
      // Earlier views keep the old buffer alive until the reset; later takes come from the new one.
      this.buf = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, n, 1 << 20));
      this.used = 0;
    }
    const v = this.buf.subarray(this.used, this.used + n);
    this.used += n;
    return v;
  }

  /** Give the memory back (a source being closed). */
  release(): void {
    if (this.wasm !== null && this.addr >= 0) this.wasm.free(this.addr);
    this.addr = -1;
    this.cap = 0;
  }
}

/** The pack seen as bytes: piece `id` is `buf[start, end)` (the reader checks the id and the frame). */
export type PieceBytes = (id: number) => { buf: Buffer; start: number; end: number };

/** What the decoder needs to know about a block besides its record (from the block table and manifest). */
export interface BlockShape {
  lines: number;
  originalBytes: number;
  /** The block's last line is the journal's unterminated final fragment. */
  lastUnterminated: boolean;
  /** Container version (1: no snapshots). */
  version: number;
}

/**
 * A source's pack frames as the rebuild kernel reads them, in the rebuilder's memory: `table` has
 * 16 bytes a frame (i32 address of its bytes, 0 when not loaded; i32 address of its pieces' starts,
 * frame-relative i32s; f64 last use, from the clock at address 8), `firstPieces` each frame's first
 * piece id then the total, `count` frames.
 */
export interface KernelFrames {
  table: number;
  firstPieces: number;
  count: number;
}

/** Lines `from`..`to` of a block as bytes: line `from + i` is `data[starts[i], ends[i])`, at block-relative original offset `offsets[i]`. */
export interface DecodedRange {
  data: Buffer;
  starts: Int32Array;
  ends: Int32Array;
  offsets: Float64Array;
  /**
   * With `mem.keep`, when the kernel rebuilt the block: `data` is a view of the rebuilder's
   * (shared) memory at this address, which stays allocated until the caller frees it
   * (`threadRebuilder().free(region)`); else -1 (`data` is a buffer of its own).
   */
  region: number;
}

// Scratch for the decimal scanners: the position after the value just read.
let scanEnd = 0;

/** The end (index of its `\n`) of the value starting at `at`, or -1. JS loop: values are short. */
function valueEnd(b: Uint8Array, at: number): number {
  const n = b.length;
  while (at < n && b[at] !== 0x0a) at++;
  return at < n ? at : -1;
}

/**
 * The position just past the `n`-th value (`\n`-terminated) from `at`, or -1 when there are fewer
 * (`indexOf` is memchr: cold code skips kilobytes of values faster than a byte loop).
 */
function skipValues(b: Buffer, at: number, n: number): number {
  for (; n > 0; n--) {
    const e = b.indexOf(0x0a, at);
    if (e < 0) return -1;
    at = e + 1;
  }
  return at;
}

/** The signed decimal starting at `at` and ending at its `\n` (scanEnd: just past the `\n`); NaN when it is not one. */
function readInt(b: Uint8Array, at: number): number {
  const n = b.length;
  let neg = false;
  if (at < n && b[at] === 0x2d) {
    neg = true;
    at++;
  }
  const first = at;
  let v = 0;
  while (at < n) {
    const c = b[at];
    if (c === 0x0a) break;
    const d = c - 48;
    if (d < 0 || d > 9) {
      scanEnd = at + 1;
      return Number.NaN;
    }
    v = v * 10 + d;
    at++;
  }
  scanEnd = at + 1;
  if (at >= n || at === first) return Number.NaN;
  return neg ? -v : v;
}

/**
 * Copy `src[a, b)` to `out` at `o` (bounds checked by the caller); a loop for short runs, `set` for
 * long ones (through a plain Uint8Array view: `subarray` of a Buffer builds a Buffer, ~3× dearer).
 */
function copyRun(src: Uint8Array, a: number, b: number, out: Uint8Array, o: number): number {
  const n = b - a;
  if (n < 64) for (let i = 0; i < n; i++) out[o + i] = src[a + i];
  else out.set(new Uint8Array(src.buffer, src.byteOffset + a, n), o);
  return n;
}

/**
 * Copy the value starting at `src[a]` up to its `\n` to `out` at `o`, in one pass (values in
 * columns, ids and inline pieces are short); returns the new `o`, and sets scanEnd to the `\n`'s
 * index (-1 when there is none). Writes past `out`'s end are dropped (typed arrays): the caller
 * checks the line's length after.
 */
function copyValue(src: Uint8Array, a: number, out: Uint8Array, o: number): number {
  const n = src.length;
  let i = a;
  for (; i < n; i++) {
    const c = src[i];
    if (c === 0x0a) break;
    out[o++] = c;
  }
  scanEnd = i < n ? i : -1;
  return o;
}

const DIGITS = new Uint8Array(24);
// The digits of the last high part writeDec wrote (ids' milliseconds share it for ~17 minutes).
let decHi = -1;
let decHiLen = 0;
const decHiBytes = new Uint8Array(24);

/** Write the non-negative safe integer `v` in decimal at `o`; returns the bytes written. */
function writeDec(out: Uint8Array, o: number, v: number): number {
  if (v < 1e6) {
    let n = 0;
    let x = v | 0;
    do {
      DIGITS[n++] = 48 + (x % 10);
      x = (x / 10) | 0;
    } while (x > 0);
    for (let i = 0; i < n; i++) out[o + i] = DIGITS[n - 1 - i];
    return n;
  }
  // v = hi·10^6 + lo: hi's digits cached, lo as exactly six digits in int32 arithmetic.
  const hi = Math.floor(v / 1e6);
  let lo = v - hi * 1e6;
  if (hi !== decHi) {
    let n = 0;
    let x = hi;
    do {
      DIGITS[n++] = 48 + (x % 10);
      x = Math.floor(x / 10);
    } while (x > 0);
    for (let i = 0; i < n; i++) decHiBytes[i] = DIGITS[n - 1 - i];
    decHi = hi;
    decHiLen = n;
  }
  for (let i = 0; i < decHiLen; i++) out[o + i] = decHiBytes[i];
  const p = o + decHiLen;
  for (let j = 5; j >= 0; j--) {
    out[p + j] = 48 + (lo % 10);
    lo = (lo / 10) | 0;
  }
  return decHiLen + 6;
}

let isoSecond = Number.NaN;
let isoPrefix = "";
/** `new Date(ms).toISOString()`, with the part up to the second cached (lines of one second share it). */
function isoOf(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== isoSecond && !cacheIsoSecond(sec)) return new Date(ms).toISOString();
  const m = ms - sec * 1000;
  return `${isoPrefix}${m < 10 ? "00" : m < 100 ? "0" : ""}${m}Z`;
}

function cacheIsoSecond(sec: number): boolean {
  const s = new Date(sec * 1000).toISOString();
  if (s.length !== 24) return false;
  isoSecond = sec;
  isoPrefix = s.slice(0, 20);
  return true;
}

// The byte writer's own cache (the encoder's isoOf keeps the string one): the second's prefix
// `YYYY-MM-DDTHH:MM:SS.` as bytes, and its minute.
let bSecond = Number.NaN;
let bMinute = Number.NaN;
const bPrefix = new Uint8Array(20);

/**
 * Cache second `sec`'s prefix; when only the second changed within the cached minute (most
 * timestamps of a journal), just its two digits (no Date formatting). False past year 9999.
 */
function cacheIsoBytes(sec: number): boolean {
  const min = Math.floor(sec / 60);
  if (min === bMinute) {
    const s = sec - min * 60;
    bPrefix[17] = 48 + Math.floor(s / 10);
    bPrefix[18] = 48 + (s % 10);
    bSecond = sec;
    return true;
  }
  const iso = new Date(sec * 1000).toISOString();
  if (iso.length !== 24) return false;
  for (let i = 0; i < 20; i++) bPrefix[i] = iso.charCodeAt(i);
  bSecond = sec;
  bMinute = min;
  return true;
}

/** Write `"` + ISO-8601 of `ms` + `"` at `o` (24 + 2 bytes, or the general path for years past 9999). */
function writeIso(out: Buffer, o: number, ms: number): number {
  const sec = Math.floor(ms / 1000);
  if (sec !== bSecond && !cacheIsoBytes(sec)) {
    const s = `"${new Date(ms).toISOString()}"`;
    if (o + s.length > out.length) throw new RangeError("timestamp past the block's end");
    return out.write(s, o, "latin1");
  }
  if (o + 26 > out.length) throw new RangeError("timestamp past the block's end");
  out[o] = 0x22;
  for (let i = 0; i < 20; i++) out[o + 1 + i] = bPrefix[i];
  const m = ms - sec * 1000;
  out[o + 21] = 48 + Math.floor(m / 100);
  out[o + 22] = 48 + (Math.floor(m / 10) % 10);
  out[o + 23] = 48 + (m % 10);
  out[o + 24] = 0x5a;
  out[o + 25] = 0x22;
  return 26;
}

/** Every character of a template that is not a hole (holes are the control characters 1–5). */
const NOT_HOLE = /[^\x01-\x05]+/g;
/** The holes of a template, as split points. */
const HOLE_SPLIT = /[\x01-\x05]/;

/**
 * A block's shape table; a shape's hole kinds and columns are read on first use (a one-line read
 * uses a few), its literal segments only when a line of it is rebuilt (lines before the one asked
 * for only advance cursors).
 */
class Meta {
  readonly kinds: Uint8Array[];
  readonly shapeCols: number[][];
  private readonly tpls: string[];
  /** A rebuilt shape's template as UTF-8, holes included; segment j is bytes [segs[k][2j], segs[k][2j+1]). */
  readonly tplBytes: Uint8Array[];
  readonly segs: Int32Array[];

  /**
   * `parsed` (version 3): shape k's template already parsed (another block used it) and its
   * columns, or null: `load` then parses the shape as JSON (and says what is wrong with it).
   */
  constructor(readonly nShapes: number, private readonly load: (k: number) => unknown, readonly nCols: number, private readonly bad: (why: string) => Error,
    private readonly parsed?: (k: number) => ParsedShape | null) {
    this.kinds = new Array(nShapes);
    this.shapeCols = new Array(nShapes);
    this.tpls = new Array(nShapes);
    this.tplBytes = new Array(nShapes);
    this.segs = new Array(nShapes);
  }

  /** Read shape k (0-based) if needed; false when k is not a shape. */
  use(k: number): boolean {
    if (!(k >= 0 && k < this.nShapes)) return false;
    if (this.kinds[k] !== undefined) return true;
    const p = this.parsed === undefined ? null : this.parsed(k);
    if (p !== null) {
      // The checks of the JSON path below, on the same values (the template's holes, the columns).
      const { tpl, cols } = p;
      if (cols.length !== tpl.strNum) throw this.bad(`shape ${k + 1} lists ${cols.length} columns for its ${tpl.strNum} holes`);
      for (const c of cols) if (!(c < this.nCols)) throw this.bad(`shape ${k + 1} names column ${c}`);
      this.kinds[k] = tpl.kinds;
      this.shapeCols[k] = cols;
      this.tplBytes[k] = tpl.bytes;
      this.segs[k] = tpl.segs;
      return true;
    }
    const sh = this.load(k);
    if (!Array.isArray(sh) || typeof sh[0] !== "string" || !Array.isArray(sh[1])) throw this.bad(`shape ${k + 1}`);
    const tpl = sh[0];
    const cols = sh[1] as number[];
    // The holes in order, found by the regex engine (a template is kilobytes, a shape has tens of holes).
    const holes = tpl.replace(NOT_HOLE, "");
    const kinds = new Uint8Array(holes.length);
    let strNum = 0;
    for (let i = 0; i < holes.length; i++) {
      const c = holes.charCodeAt(i);
      kinds[i] = c;
      if (c <= 2) strNum++;
    }
    if (cols.length !== strNum) throw this.bad(`shape ${k + 1} lists ${cols.length} columns for its ${strNum} holes`);
    for (const c of cols) if (!(Number.isInteger(c) && c >= 0 && c < this.nCols)) throw this.bad(`shape ${k + 1} names column ${c}`);
    this.tpls[k] = tpl;
    this.kinds[k] = kinds;
    this.shapeCols[k] = cols;
    return true;
  }

  /**
   * Build shape k's template bytes and segment bounds (`use(k)` first): one buffer per shape, the
   * segments are ranges of it (holes are the bytes 1–5: JSON escapes every other control character).
   */
  segsOf(k: number): Int32Array {
    let segs = this.segs[k];
    if (segs === undefined) {
      const bytes = Buffer.from(this.tpls[k], "utf8");
      segs = segmentsOf(bytes, this.kinds[k].length);
      this.tplBytes[k] = bytes;
      this.segs[k] = segs;
    }
    return segs;
  }
}

/** The literal segments of a template's UTF-8 bytes around its `holes` holes (the bytes 1–5: JSON escapes every other control character). */
function segmentsOf(bytes: Uint8Array, holes: number): Int32Array {
  const segs = new Int32Array(2 * holes + 2);
  let j = 0;
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (c >= 1 && c <= 5) {
      segs[j++] = from;
      segs[j++] = i;
      from = i + 1;
    }
  }
  segs[j++] = from;
  segs[j] = bytes.length;
  return segs;
}

/** A template parsed: its hole kinds, how many are string columns, its UTF-8 bytes and their segments. */
export interface ParsedTemplate {
  kinds: Uint8Array;
  strNum: number;
  bytes: Uint8Array;
  segs: Int32Array;
}

export interface ParsedShape {
  tpl: ParsedTemplate;
  cols: number[];
}

/**
 * The UTF-8 of the templates of the block being decoded (a shape's bytes are a view of it; a
 * block's Meta lives only within its decodeBlockRange call, so the next block starts it over).
 * At 1 GB each restore worker parsed 4,600–6,400 templates, 15–23 MB (the largest 270 KB): as
 * strings (JSON.parse, the hole regex, Buffer.from, the segment scan) they were ~0.2 s and most
 * of the worker's garbage.
 */
let tplArena: Buffer = Buffer.allocUnsafeSlow(1 << 20);
let tplArenaUsed = 0;

/** The JSON escapes `\b \f \n \r \t` (others: `"`, `\\`, `/`, `\u`) as bytes, by the escape's letter. */
const ESCAPED = new Uint8Array(128);
ESCAPED[0x62] = 8;
ESCAPED[0x66] = 12;
ESCAPED[0x6e] = 10;
ESCAPED[0x72] = 13;
ESCAPED[0x74] = 9;
ESCAPED[0x22] = 0x22;
ESCAPED[0x5c] = 0x5c;
ESCAPED[0x2f] = 0x2f;

function hexDigit(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
}

/** The length of the well-formed UTF-8 sequence at `b[i]` (a byte ≥ 0x80) within `to`, or 0. */
function utf8Length(b: Buffer, i: number, to: number): number {
  const c = b[i];
  const cont = (j: number, lo = 0x80, hi = 0xbf) => j < to && b[j] >= lo && b[j] <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  }
  return 0;
}

/**
 * Version 3 shape line `b[s, e)` (no `\n`) when it is exactly `[` + a JSON string + `,[` + column
 * numbers (canonical decimals, comma-separated) + `]]`, read from its bytes (no string made): the
 * template unescaped into the arena, its holes (the escapes `\u0001`–`\u0005`) and segments, and
 * the columns. Null for anything else (spaces, other numbers, a `\u` escape above 0x7f, bytes that
 * are not well-formed UTF-8, not JSON): the JSON path reads it, with the same results and errors.
 * For what it accepts the bytes are those of Buffer.from(JSON.parse(line)[0]) (well-formed UTF-8
 * passes through decoding and encoding unchanged).
 */
export function parsedShapeLine(b: Buffer, s: number, e: number): ParsedShape | null {
  if (e - s < 7 || b[s] !== 0x5b || b[s + 1] !== 0x22 || b[e - 1] !== 0x5d || b[e - 2] !== 0x5d) return null;
  // The columns: digits and commas back from the end to their `[`.
  let p = e - 3;
  while (p > s && ((b[p] >= 0x30 && b[p] <= 0x39) || b[p] === 0x2c)) p--;
  if (b[p] !== 0x5b || b[p - 1] !== 0x2c || b[p - 2] !== 0x22 || p - 2 <= s + 1) return null;
  const cols = shapeColumns(b, p + 1, e - 2);
  if (cols === null) return null;
  // The string's body, between its quotes: unescaped at most byte for byte.
  const from = s + 2;
  const to = p - 2;
  if (tplArenaUsed + (to - from) > tplArena.length) {
    // Views of the old arena keep it alive until their block is done.
    tplArena = Buffer.allocUnsafeSlow(Math.max(2 * tplArena.length, to - from));
    tplArenaUsed = 0;
  }
  const out = tplArena;
  const o0 = tplArenaUsed;
  const holes: number[] = [];
  const o = unescapeTemplate(b, from, to, out, o0, holes);
  if (o < 0) return null;
  tplArenaUsed = o;
  const nHoles = holes.length >> 1;
  const kinds = new Uint8Array(nHoles);
  const segs = new Int32Array(2 * nHoles + 2);
  let strNum = 0;
  let seg = 0;
  for (let h = 0; h < nHoles; h++) {
    const at = holes[2 * h];
    const k = holes[2 * h + 1];
    kinds[h] = k;
    if (k <= 2) strNum++;
    segs[2 * h] = seg;
    segs[2 * h + 1] = at;
    seg = at + 1;
  }
  segs[2 * nHoles] = seg;
  segs[2 * nHoles + 1] = o - o0;
  return { tpl: { kinds, strNum, bytes: out.subarray(o0, o), segs }, cols };
}

/** A shape line's column numbers `b[from, to)` (then `]`): canonical decimals, comma-separated; null for anything else. */
function shapeColumns(b: Buffer, from: number, to: number): number[] | null {
  const cols: number[] = [];
  if (from < to) {
    let v = 0;
    let digits = 0;
    let lead = false;
    for (let i = from; i <= to; i++) {
      const c = b[i];
      if (c === 0x2c || i === to) {
        if (digits === 0 || digits > 9) return null;
        cols.push(v);
        v = 0;
        digits = 0;
        continue;
      }
      // Not JSON: a leading zero before another digit.
      if (digits === 1 && lead) return null;
      lead = digits === 0 && c === 0x30;
      v = v * 10 + (c - 0x30);
      digits++;
    }
  }
  return cols;
}

/**
 * The JSON string body `b[from, to)` unescaped into `out` from `o` (a template: its holes, the
 * escapes `\u0001`–`\u0005`, pushed to `holes` as their offset from `o` and kind); the end in
 * `out`, or -1 for what parsedShapeLine leaves to the JSON path. Its own function: the loop is
 * what TurboFan compiles (with parsedShapeLine around it, 30–60 ms a compile, twice per thread).
 */
function unescapeTemplate(b: Buffer, from: number, to: number, out: Buffer, o: number, holes: number[]): number {
  const o0 = o;
  let i = from;
  while (i < to) {
    const c = b[i];
    if (c === 0x5c) {
      if (i + 1 >= to) return -1;
      const d = b[i + 1];
      let v: number;
      if (d === 0x75) {
        if (i + 6 > to) return -1;
        v = hex4(b, i + 2);
        if (v < 0 || v >= 0x80) return -1;
        i += 6;
        if (v >= 1 && v <= 5) holes.push(o - o0, v);
      } else {
        v = d < 128 ? ESCAPED[d] : 0;
        if (v === 0) return -1;
        i += 2;
      }
      out[o++] = v;
    } else if (c < 0x80) {
      // A quote inside, or a raw control character: not JSON (the JSON path says so).
      if (c === 0x22 || c < 0x20) return -1;
      out[o++] = c;
      i++;
    } else {
      const n = utf8Length(b, i, to);
      if (n === 0) return -1;
      for (let k = 0; k < n; k++) out[o++] = b[i + k];
      i += n;
    }
  }
  return o;
}

/** The four hex digits at `b[i…]` as a number, or -1. */
function hex4(b: Buffer, i: number): number {
  const h0 = hexDigit(b[i]);
  const h1 = hexDigit(b[i + 1]);
  const h2 = hexDigit(b[i + 2]);
  const h3 = hexDigit(b[i + 3]);
  return (h0 | h1 | h2 | h3) < 0 ? -1 : (h0 << 12) | (h1 << 8) | (h2 << 4) | h3;
}

/** Version 1–2 META: one JSON object `{cols, shapes}`. */
function parseMeta(b: Buffer, nStreams: number, firstCol: number, bad: (why: string) => Error): Meta {
  let meta: { cols: string[]; shapes: unknown[] };
  try {
    meta = JSON.parse(b.toString("utf8"));
  } catch {
    throw bad("its shape table is not JSON");
  }
  if (!Array.isArray(meta?.cols) || !Array.isArray(meta.shapes) || nStreams !== firstCol + meta.cols.length) throw bad("shape table");
  return new Meta(meta.shapes.length, (k) => meta.shapes[k], meta.cols.length, bad);
}

/** Where each `\n`-terminated line of `b` starts (and, last, b.length); null when b does not end with `\n`. */
function lineStarts(b: Buffer): number[] | null {
  const starts: number[] = [0];
  let at = 0;
  while (at < b.length) {
    const nl = b.indexOf(0x0a, at);
    if (nl < 0) return null;
    at = nl + 1;
    starts.push(at);
  }
  return starts;
}

/**
 * Version 3 META: a list, line 0 the column names, line k shape k (`[template, [column, …]]`);
 * only the shapes used are parsed (and the names only when `names`: a whole block checks them).
 */
function metaLines(b: Buffer, nStreams: number, firstCol: number, bad: (why: string) => Error, names: boolean): Meta {
  tplArenaUsed = 0;
  const starts = lineStarts(b);
  if (starts === null || starts.length < 2) throw bad("shape table");
  const json = (line: number): unknown => {
    try {
      return JSON.parse(b.toString("utf8", starts[line], starts[line + 1] - 1));
    } catch {
      throw bad("its shape table is not JSON");
    }
  };
  const nCols = nStreams - firstCol;
  if (names) {
    const cols = json(0);
    if (!Array.isArray(cols) || cols.length !== nCols) throw bad("shape table");
  }
  return new Meta(starts.length - 2, (k) => json(k + 1), nCols, bad, (k) => parsedShapeLine(b, starts[k + 1], starts[k + 2] - 1));
}

/** What the rebuild loop reads and the cursors it starts from (see rebuildLines). */
interface RebuildJob {
  first: number;
  last: number;
  size: number;
  out: Buffer;
  shapeOf: Int32Array;
  lenOf: Float64Array;
  meta: Meta;
  verbatim: Buffer | null;
  idMs: Buffer | null;
  idRand: Buffer | null;
  ts: Buffer | null;
  text: Buffer | null;
  textn: Buffer | null;
  colBuf: (Buffer | null)[];
  colAt: Int32Array;
  vAt: number;
  iAt: number;
  rndAt: number;
  tsAt: number;
  tAt: number;
  tnAt: number;
  prevRef: number;
  T: number;
  pieceBytes: PieceBytes;
  starts: Int32Array;
  ends: Int32Array;
  offsets: Float64Array;
  startOffset: number;
  blockLines: number;
  lastUnterminated: boolean;
  /** Whole blocks: every snapshot, checked against the cursors it reaches (else null). */
  snapVals: Float64Array | null;
  /** The pack's frame table in the WebAssembly rebuilder's memory, when the source keeps one. */
  frames?: KernelFrames;
  perSnap: number;
  colsAt: number;
  bad: (why: string) => Error;
  lie: (why: string) => Error;
  /** Whole blocks: the kernel rebuilds straight into a region of its memory kept for the caller (`region`, `out` its view). */
  keep: boolean;
  region: number;
}

/**
 * Rebuild lines `first`..`last` into `out` from the cursors of `j`; returns the bytes written.
 * Its own function, not a part of decodeBlockRange: TurboFan optimises this loop alone (the whole
 * decoder as one function took it hundreds of ms of compiling, several times, per thread).
 */
function rebuildLines(j: RebuildJob): number {
  const { first, last, size, out, shapeOf, lenOf, meta, verbatim, idMs, idRand, ts, text, textn, colBuf, colAt } = j;
  const { pieceBytes, starts, ends, offsets, startOffset, blockLines, lastUnterminated, snapVals, perSnap, colsAt, bad, lie } = j;
  let { vAt, iAt, rndAt, tsAt, tAt, tnAt, prevRef, T } = j;
  const noStream = (what: string) => bad(`line needs the ${what} stream`);
  let o = 0;
  try {
    for (let i = first; i <= last; i++) {
      if (snapVals !== null && i > 0 && i % SNAPSHOT_LINES === 0) {
        const v = (i / SNAPSHOT_LINES - 1) * perSnap;
        let ok = snapVals[v] === T && snapVals[v + 1] === prevRef && snapVals[v + 2] === vAt && snapVals[v + 3] === iAt
          && snapVals[v + 4] === rndAt && snapVals[v + 5] === tsAt && snapVals[v + 6] === tAt && snapVals[v + 7] === tnAt;
        for (let c = 0; ok && c < meta.nCols; c++) ok = snapVals[v + colsAt + c] === colAt[c];
        if (!ok) throw lie(`snapshot ${i / SNAPSHOT_LINES} differs from the cursors at line ${i}`);
      }
      const shape = shapeOf[i];
      const len = lenOf[i];
      const start = o;
      if (start + len > size) throw bad(`line ${i} does not fit its block`);
      if (shape === 0) {
        if (verbatim === null) throw noStream("verbatim");
        const e = verbatim.indexOf(0x0a, vAt);
        if (e < 0 || e - vAt !== len) throw bad(`verbatim line ${i} does not match its length`);
        o += copyRun(verbatim, vAt, e, out, o);
        vAt = e + 1;
      } else {
        const k = shape - 1;
        if (meta.kinds[k] === undefined) meta.use(k);
        const seg = meta.segsOf(k);
        const tb = meta.tplBytes[k];
        const kind = meta.kinds[k];
        const lc = meta.shapeCols[k];
        const end = start + len;
        let ci = 0;
        if (o + (seg[1] - seg[0]) > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
        o += copyRun(tb, seg[0], seg[1], out, o);
        for (let h = 0; h < kind.length; h++) {
          switch (kind[h]) {
            case 1:
            case 2: {
              const c = lc[ci++];
              const cb = colBuf[c];
              if (cb === null || cb === undefined) throw noStream(`column ${c}`);
              const q = kind[h] === 1;
              if (q) out[o++] = 0x22;
              o = copyValue(cb, colAt[c], out, o);
              if (scanEnd < 0) throw bad(`line ${i} runs out of column ${c}`);
              if (q) out[o++] = 0x22;
              if (o > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
              colAt[c] = scanEnd + 1;
              break;
            }
            case 3: {
              if (idMs === null || idRand === null) throw noStream("id");
              if (iAt >= idMs.length) throw bad(`line ${i} runs out of ids`);
              const d = readInt(idMs, iAt);
              iAt = scanEnd;
              if (!Number.isSafeInteger(d)) throw bad(`line ${i} runs out of ids`);
              T += d;
              if (!(T >= 0 && Number.isSafeInteger(T))) throw bad(`line ${i} has a bad id time`);
              out[o++] = 0x22;
              o += writeDec(out, o, T);
              out[o++] = 0x2d;
              o = copyValue(idRand, rndAt, out, o);
              if (scanEnd < 0) throw bad(`line ${i} runs out of ids`);
              out[o++] = 0x22;
              if (o > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
              rndAt = scanEnd + 1;
              break;
            }
            case 4: {
              if (ts === null) throw noStream("timestamp");
              if (tsAt >= ts.length) throw bad(`line ${i} runs out of timestamps`);
              const ms = T + readInt(ts, tsAt);
              tsAt = scanEnd;
              if (!Number.isSafeInteger(ms)) throw bad(`line ${i} has a bad timestamp`);
              o += writeIso(out, o, ms);
              if (o > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
              break;
            }
            case 5: {
              if (text === null || textn === null) throw noStream("text");
              if (tnAt >= textn.length) throw bad(`line ${i} runs out of text values`);
              const np = readInt(textn, tnAt);
              tnAt = scanEnd;
              if (!(np >= 1)) throw bad(`line ${i} has a bad text value`);
              if (o >= end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
              out[o++] = 0x22;
              for (let j = 0; j < np; j++) {
                if (j > 0) {
                  if (o + 2 > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
                  out[o++] = 0x5c;
                  out[o++] = 0x6e;
                }
                let te: number;
                if (text[tAt] === 0x27) {
                  o = copyValue(text, tAt + 1, out, o);
                  te = scanEnd;
                  if (te < 0) throw bad(`line ${i} runs out of text pieces`);
                  if (o > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
                } else {
                  te = valueEnd(text, tAt);
                  if (te < 0) throw bad(`line ${i} runs out of text pieces`);
                  const id = prevRef + 1 + readInt(text, tAt);
                  if (!Number.isSafeInteger(id) || id < 0) throw bad(`line ${i} names a bad piece`);
                  prevRef = id;
                  const p = pieceBytes(id);
                  if (o + (p.end - p.start) > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
                  o += copyRun(p.buf, p.start, p.end, out, o);
                }
                tAt = te + 1;
              }
              if (o >= end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
              out[o++] = 0x22;
              break;
            }
            default:
              throw bad(`shape ${shape} has an unknown hole`);
          }
          const sa = seg[2 * h + 2];
          const sz = seg[2 * h + 3] - sa;
          if (o + sz > end) throw bad(`line ${i} rebuilds past its ${len} bytes`);
          o += copyRun(tb, sa, sa + sz, out, o);
        }
        if (o !== end) throw bad(`line ${i} rebuilds to ${o - start} bytes, not its ${len}`);
      }
      if (i >= first) {
        starts[i - first] = start;
        ends[i - first] = o;
        offsets[i - first] = startOffset + start;
      }
      if (i < blockLines - 1 || !lastUnterminated) out[o++] = 0x0a;
    }
  } catch (e) {
    // A copy past the end of the output (a lying stream) throws a RangeError.
    if (e instanceof RangeError) throw bad(e.message);
    throw e;
  }
  return o;
}

/** This thread's job region in the rebuilder's memory (kept: the next block's job reuses it, no fragments). */
let jobAt = -1;
let jobCap = 0;
/**
 * A kept output region's least size (`mem.keep`): a block is cut at the first line end after
 * BLOCK_TARGET_BYTES, so most fit in this, and a region freed is the right size for the next one.
 */
const KEEP_REGION_BYTES = BLOCK_TARGET_BYTES + 1024 * 1024;
/**
 * Kept regions of KEEP_REGION_BYTES: every one made (`keptMade`) and the free ones, taken again by
 * the next blocks; never given back to the allocator, where frames would take parts of a free one
 * and the next region would grow the memory (two workers' memories were 59 and 71 MiB at 1 GB).
 */
const keptMade = new Set<number>();
const keptFree: number[] = [];

/** A region of this thread's rebuilder memory for a kept block of `size` bytes (may grow the memory). */
function keptRegion(w: WasmRebuilder, size: number): number {
  const need = padded(size) + 64;
  if (need > KEEP_REGION_BYTES) return w.alloc(need);
  const free = keptFree.pop();
  if (free !== undefined) return free;
  const r = w.alloc(KEEP_REGION_BYTES);
  keptMade.add(r);
  return r;
}

/** A region `decodeBlockRange(…, { keep: true })` answered (`region`) is no longer used; -1: nothing. */
export function freeKeptRegion(region: number): void {
  if (region < 0) return;
  if (keptMade.has(region)) {
    if (!keptFree.includes(region)) keptFree.push(region);
  } else threadRebuilder()?.free(region);
}

/** Blocks the kernel rebuilt in this thread (tests check that it ran rather than fell back). */
let kernelBlocks = 0;
export function kernelBlockCount(): number {
  return kernelBlocks;
}



/** Which of shapes 0..nShapes the first `n` lines use (1: used). */
function usedShapes(shapeOf: Int32Array, n: number, nShapes: number): Uint8Array {
  const used = new Uint8Array(nShapes + 1);
  for (let i = 0; i < n; i++) used[shapeOf[i]] = 1;
  return used;
}

/** The largest of the first `n` values. */
function maxOf(a: Float64Array, n: number): number {
  let m = 0;
  for (let i = 0; i < n; i++) if (a[i] > m) m = a[i];
  return m;
}

/** The first `n` line lengths into i32[at…], each at most `cap`. */
function putLens(i32: Int32Array, at: number, lenOf: Float64Array, n: number, cap: number): void {
  for (let i = 0; i < n; i++) i32[at + i] = Math.min(lenOf[i], cap);
}

/** Does every snapshot equal the cursors the kernel recorded (f64[g…], 8 + nCols per snapshot)? */
function snapshotsMatch(f64: Float64Array, g0: number, snapVals: Float64Array, nSnaps: number, perSnap: number, colsAt: number, nCols: number): boolean {
  for (let s = 0; s < nSnaps; s++) {
    const v = s * perSnap;
    const g = g0 + s * (8 + nCols);
    for (let x = 0; x < 8; x++) if (f64[g + x] !== snapVals[v + x]) return false;
    for (let c = 0; c < nCols; c++) if (f64[g + 8 + c] !== snapVals[v + colsAt + c]) return false;
  }
  return true;
}

/** offsets[i] = base + starts[i] for the first `n` lines. */
function addOffsets(offsets: Float64Array, starts: Int32Array, base: number, n: number): void {
  for (let i = 0; i < n; i++) offsets[i] = base + starts[i];
}

/**
 * A whole block rebuilt by the WebAssembly kernel (`rebuild.wat`) into `j.out`, with the same
 * starts/ends/offsets as rebuildLines; the bytes written, or -1 when the kernel is unavailable or
 * gives up (anything the JavaScript decoder would refuse, a snapshot that differs from the cursors,
 * a timestamp outside 1970–9999): the caller then runs rebuildLines, which gives the bytes or the
 * error. The streams, the used shapes' templates and the rows are copied into the module's memory
 * (a few MB a block: ~1 ms), the output copied back. Pieces are read where they are: a source
 * that decodes whole blocks keeps its pack frames in the module's memory (ExtSource); a piece
 * elsewhere makes the kernel give up.
 */
function wasmRebuild(j: RebuildJob): number {
  if (j.first !== 0 || j.last !== j.blockLines - 1) return -1;
  const w = threadRebuilder();
  if (w === null) return -1;
  let base: number;
  /** Per stream (VERBATIM … TEXTN, then the columns): its address in the rebuilder's memory (-1: not there) and length. */
  let placed: Placed = { at: [], len: [] };
  try {
    const { meta, shapeOf, lenOf, size, colBuf } = j;
    const n = j.blockLines;
    const nCols = meta.nCols;
    const nSnaps = Math.floor((n - 1) / SNAPSHOT_LINES);
    const used = usedShapes(shapeOf, n, meta.nShapes);
    const EMPTY_VIEW = EMPTY;
    const streams: Uint8Array[] = [j.verbatim ?? EMPTY_VIEW, j.idMs ?? EMPTY_VIEW, j.idRand ?? EMPTY_VIEW, j.ts ?? EMPTY_VIEW, j.text ?? EMPTY_VIEW, j.textn ?? EMPTY_VIEW];
    for (let c = 0; c < nCols; c++) streams.push(colBuf[c] ?? EMPTY_VIEW);
    // Where the streams already in the rebuilder's memory are, and every stream's length, before
    // an alloc can grow (move) the memory: a grow detaches those views (their length reads 0).
    const mine = w.buf.buffer;
    const loc = streams.map((b) => (b.buffer === mine && b.length > 0 ? b.byteOffset : -1));
    const slen = streams.map((b) => b.length);
    placed = { at: loc, len: slen };
    // The output goes through a region of outChunk bytes (or the longest line), copied out as it fills.
    // Kept (j.keep): the whole block in one region of its own, handed to the caller as it is. The
    // kernel counts a newline after every line when it checks the region, also after a torn last
    // one: a region of `size` made it stop before that line and write it at the region's start
    // again (a journal without a final newline restored on workers rebuilt to the wrong bytes).
    const cap = j.keep ? size + 1 : Math.min(size, Math.max(outChunk, maxOf(lenOf, n) + 1));
    let bytes = 176 + padded(20 * meta.nShapes) + 4 * padded(4 * n) + 3 * padded(4 * nCols) + (j.keep ? 0 : padded(cap) + 64) + padded(8 * nSnaps * (8 + nCols));
    for (let i = 0; i < streams.length; i++) if (loc[i] < 0) bytes += padded(slen[i]);
    for (let k = 1; k <= meta.nShapes; k++) {
      if (used[k] === 0) continue;
      if (meta.kinds[k - 1] === undefined) meta.use(k - 1);
      const segs = meta.segsOf(k - 1);
      bytes += padded(meta.tplBytes[k - 1].length) + padded(4 * segs.length) + padded(meta.kinds[k - 1].length) + padded(4 * meta.shapeCols[k - 1].length);
    }
    if (bytes > jobCap) {
      if (jobAt >= 0) w.free(jobAt);
      jobCap = bytes + (bytes >> 3);
      jobAt = w.alloc(jobCap);
    }
    base = jobAt;
    // One size for every kept region (most blocks fit it), so a freed one is taken again whole.
    if (j.keep) j.region = keptRegion(w, size);
    // The alloc may have moved the memory: views of it from here on (the streams in it are found
    // by address, their lengths are slen; a stream elsewhere is a buffer of its own, still whole).
    const { u8, i32 } = w;
    let at = base;
    const take = (len: number): number => {
      const p = at;
      at += padded(len);
      return p;
    };
    const P = take(176);
    const put = (b: Uint8Array, i = -1): number => {
      if (i >= 0 && loc[i] >= 0) return loc[i];
      const p = take(b.length);
      u8.set(b, p);
      return p;
    };
    const tab = take(20 * meta.nShapes);
    i32.fill(0, tab >> 2, (tab >> 2) + 5 * meta.nShapes);
    for (let k = 1; k <= meta.nShapes; k++) {
      if (used[k] === 0) continue;
      const t = (tab >> 2) + 5 * (k - 1);
      const segs = meta.segs[k - 1];
      const cols = meta.shapeCols[k - 1];
      i32[t] = put(meta.tplBytes[k - 1]);
      const sp = take(4 * segs.length);
      i32.set(segs, sp >> 2);
      i32[t + 1] = sp;
      i32[t + 2] = put(meta.kinds[k - 1]);
      i32[t + 3] = meta.kinds[k - 1].length;
      const cp = take(4 * cols.length);
      i32.set(cols, cp >> 2);
      i32[t + 4] = cp;
    }
    const sp = take(4 * n);
    i32.set(shapeOf.subarray(0, n), sp >> 2);
    const lp = take(4 * n);
    putLens(i32, lp >> 2, lenOf, n, size + 1);
    const q = P >> 2;
    for (let s = 0; s < 6; s++) {
      const p = put(streams[s], s);
      i32[q + 6 + 2 * s] = p;
      i32[q + 7 + 2 * s] = p + slen[s];
    }
    const cb = take(4 * nCols);
    const ce = take(4 * nCols);
    const ca = take(4 * nCols);
    for (let c = 0; c < nCols; c++) {
      const p = put(streams[6 + c], 6 + c);
      i32[(cb >> 2) + c] = p;
      i32[(ce >> 2) + c] = p + slen[6 + c];
      i32[(ca >> 2) + c] = p;
    }
    const out = j.keep ? j.region : take(cap + 64);
    const st = take(4 * n);
    const en = take(4 * n);
    const rec = take(8 * nSnaps * (8 + nCols));
    i32[q] = n;
    i32[q + 1] = size;
    i32[q + 2] = out;
    i32[q + 3] = sp;
    i32[q + 4] = lp;
    i32[q + 5] = tab;
    i32[q + 18] = cb;
    i32[q + 19] = ce;
    i32[q + 20] = ca;
    i32[q + 21] = nCols;
    i32[q + 22] = st;
    i32[q + 23] = en;
    i32[q + 24] = rec;
    i32[q + 25] = j.lastUnterminated ? 1 : 0;
    i32[q + 26] = 0;
    i32[q + 27] = 0;
    i32[q + 28] = cap;
    i32.fill(0, q + 30, q + 32);
    i32.fill(-1, q + 32, q + 34);
    for (let s = 0; s < 6; s++) i32[q + 34 + s] = i32[q + 6 + 2 * s];
    i32[q + 40] = j.frames?.table ?? 0;
    i32[q + 41] = j.frames?.firstPieces ?? 0;
    i32[q + 42] = j.frames?.count ?? 0;
    const pieceBytes = j.pieceBytes;
    const piece = (id: number): number => {
      const p = pieceBytes(id);
      // A frame loaded by this call may have grown the memory: compare with its views now.
      if (p.buf.buffer !== w.buf.buffer || p.buf.byteOffset !== 0) return -1;
      w.i32[1] = p.end;
      return p.start;
    };
    // Region by region: each call rebuilds the lines that fit and saves its cursors at P.
    let r = 0;
    while (w.i32[q + 26] < n) {
      const line = w.i32[q + 26];
      // Kept: a later call writes on after the earlier ones, in what is left of the region.
      if (j.keep) {
        w.i32[q + 2] = out + r;
        w.i32[q + 28] = cap - r;
      }
      const got = w.rebuild(P, piece);
      if (got < 0 || r + got > size || w.i32[q + 26] <= line) {
        giveUp(j, w, placed);
        return -1;
      }
      if (!j.keep) j.out.set(w.u8.subarray(out, out + got), r);
      r += got;
    }
    // Every snapshot against the cursors the kernel recorded at its line (rebuildLines throws the lie).
    if (j.snapVals !== null && !snapshotsMatch(w.f64, rec >> 3, j.snapVals, nSnaps, j.perSnap, j.colsAt, nCols)) {
      giveUp(j, w, placed);
      return -1;
    }
    j.starts.set(w.i32.subarray(st >> 2, (st >> 2) + n));
    j.ends.set(w.i32.subarray(en >> 2, (en >> 2) + n));
    addOffsets(j.offsets, j.starts, j.startOffset, n);
    if (j.keep) j.out = Buffer.from(w.u8.buffer, j.region, size);
    kernelBlocks++;
    return r;
  } catch {
    // A shape that does not parse, a piece the pack does not hold: the JavaScript decoder says which.
    giveUp(j, w, placed);
    return -1;
  }
}

/**
 * Before the JavaScript decoder takes over a block the kernel gave up on: the streams that are
 * views of the rebuilder's memory become copies (the kernel's frame loads may have moved the
 * memory, detaching them, and the decoder's own frame loads could move it again under it).
 */
interface Placed {
  at: number[];
  len: number[];
}

function giveUp(j: RebuildJob, w: WasmRebuilder, placed: Placed): void {
  freeKeptRegion(j.region);
  j.region = -1;
  const own = (b: Buffer | null, i: number): Buffer | null => {
    const a = placed.at[i] ?? -1;
    return a < 0 ? b : Buffer.from(w.u8.subarray(a, a + placed.len[i]));
  };
  j.verbatim = own(j.verbatim, 0);
  j.idMs = own(j.idMs, 1);
  j.idRand = own(j.idRand, 2);
  j.ts = own(j.ts, 3);
  j.text = own(j.text, 4);
  j.textn = own(j.textn, 5);
  for (let c = 0; c < j.colBuf.length; c++) j.colBuf[c] = own(j.colBuf[c], 6 + c);
}


/*
 * The per-line loops of a whole-block decode live in small functions of their own: TurboFan then
 * compiles each loop alone (a millisecond), not the decoder around it. Inside decodeBlockRange and
 * wasmRebuild these loops made V8 optimise those two large functions (with OSR, and again after a
 * deoptimisation) in every thread: ~1.1 s of compile jobs in a 100 MB restore's two workers
 * (--trace-opt), where a block's whole decode is ~20 ms once warm.
 */

/** The bytes of lines `from`..`to` with their newlines (lens from LINELEN). */
function linesBytes(lenOf: Float64Array, from: number, to: number): number {
  let size = 0;
  for (let i = from; i <= to; i++) size += lenOf[i] + 1;
  return size;
}

/** Where scanRows stopped in ROWS and LINELEN. */
let rowsEnd = 0;
let lensEnd = 0;

/**
 * Lines `from`..`to` of ROWS and LINELEN (from positions `rAt`, `lAt`) into shapeOf and lenOf; with
 * `snapVals` (a whole version 3 block) each snapshot's ROWS, LINELEN and offset positions checked
 * where the scan reaches them. Ends in rowsEnd and lensEnd.
 */
function scanRows(rows: Buffer, lens: Buffer, rAt: number, lAt: number, from: number, to: number, lines: number, nShapes: number,
  shapeOf: Int32Array, lenOf: Float64Array, snapVals: Float64Array | null, perSnap: number, bad: (why: string) => Error, lie: (why: string) => Error): void {
  let running = 0;
  for (let i = from; i <= to; i++) {
    if (snapVals !== null && i > 0 && i % SNAPSHOT_LINES === 0) {
      const v = (i / SNAPSHOT_LINES - 1) * perSnap;
      if (snapVals[v + 8] !== rAt || snapVals[v + 9] !== lAt || snapVals[v + 10] !== running) throw lie(`snapshot ${i / SNAPSHOT_LINES} differs from the rows at line ${i}`);
    }
    if (rAt >= rows.length) throw bad(`${i} rows for ${lines} lines`);
    const sh = readInt(rows, rAt);
    rAt = scanEnd;
    if (lAt >= lens.length) throw bad(`line ${i} has no length`);
    const len = readInt(lens, lAt);
    lAt = scanEnd;
    if (!(sh >= 0 && sh <= nShapes) || !(len >= 0)) throw bad(`line ${i} has a bad shape or length`);
    shapeOf[i] = sh;
    lenOf[i] = len;
    running += len + 1;
  }
  rowsEnd = rAt;
  lensEnd = lAt;
}

/**
 * Version 3 SNAP: the first `upTo` deltas of value line `v` (lines start at `starts`), summed;
 * with upTo = nSnaps the line must hold exactly that many. Each running sum into `all` when given.
 */
function sumSnapLine(sb: Buffer, starts: number[], v: number, upTo: number, nSnaps: number, perSnap: number, lie: (why: string) => Error, all?: Float64Array): number {
  let at = starts[v];
  const end = starts[v + 1] - 1;
  let acc = v === 1 ? -1 : 0;
  for (let j = 0; j < upTo; j++) {
    if (at > end) throw lie(`value ${v} holds ${j} snapshots, ${nSnaps} expected`);
    const neg = sb[at] === 0x2d;
    let p = neg ? at + 1 : at;
    const d0 = p;
    let d = 0;
    while (p < end && sb[p] !== 0x2c) {
      const c = sb[p] - 48;
      if (c < 0 || c > 9) throw lie(`value ${v} of snapshot ${j + 1} is not a decimal`);
      d = d * 10 + c;
      p++;
    }
    if (p === d0 || !Number.isSafeInteger(d)) throw lie(`value ${v} of snapshot ${j + 1} is not a decimal`);
    acc += neg ? -d : d;
    if (all !== undefined) all[j * perSnap + v] = acc;
    at = p + 1;
  }
  if (upTo === nSnaps && at !== end + 1) throw lie(`value ${v} holds more than ${nSnaps} snapshots`);
  return acc;
}

/**
 * Rebuild lines `from`..`to` (block-relative, inclusive) of a record into bytes. The whole block
 * (`from` 0, `to` lines − 1) decodes every stream and checks every snapshot against the cursors it
 * reaches (EXT_SNAPSHOT_INVALID when one lies); a shorter range starts at the nearest snapshot at
 * or before `from` (version 2), decodes only the streams its lines use and rebuilds at most
 * SNAPSHOT_LINES − 1 lines before `from`. EXT_CORRUPT when the streams are inconsistent or a line's
 * length differs from LINELEN; EXT_INDEX_INVALID when the whole block's bytes differ from its index.
 * A whole block is rebuilt by the WebAssembly kernel when it can (`mem.js`: never; the same bytes
 * and errors either way).
 */
export function decodeBlockRange(record: Buffer, b: BlockShape, pieceBytes: PieceBytes, path?: string, from = 0, to = b.lines - 1, mem: { scratch?: Scratch; out?: Buffer; js?: boolean; frames?: KernelFrames; keep?: boolean } = {}): DecodedRange {
  const bad = (why: string) => extError("EXT_CORRUPT", `a block does not decode: ${why}`, path);
  const lie = (why: string) => extError("EXT_SNAPSHOT_INVALID", `a block's cursor snapshot lies: ${why}`, path);
  const firstCol = firstColumnStream(b.version);
  const snapshots = b.version >= 2;
  const whole = from <= 0 && to >= b.lines - 1;
  const last = Math.min(to, b.lines - 1);
  const first = Math.max(0, from);
  // ROWS, LINELEN, META (and SNAP) first; the other streams when the range needs them.
  const v3 = b.version >= 3;
  const head = unpackRecord(record, path, whole ? undefined : (s) => s <= STREAM.LINELEN || (snapshots && s === STREAM.SNAP), firstCol, mem.scratch);
  const nStreams = head.length;
  const meta = v3 ? metaLines(head[STREAM.META] as Buffer, nStreams, firstCol, bad, whole) : parseMeta(head[STREAM.META] as Buffer, nStreams, firstCol, bad);
  const rows = head[STREAM.ROWS] as Buffer;
  const lens = head[STREAM.LINELEN] as Buffer;
  const atBoundary = (buf: Buffer | null, pos: number): boolean => buf === null || pos === 0 || (pos <= buf.length && buf[pos - 1] === 0x0a);

  // Snapshots: T, prevRef, positions of SNAPSHOT_STREAMS, (version 3: ROWS, LINELEN, offset), then of each column.
  const colsAt = snapColumnsAt(b.version);
  const perSnap = colsAt + meta.nCols;
  const nSnaps = snapshots ? Math.floor((b.lines - 1) / SNAPSHOT_LINES) : 0;
  // The start: the nearest snapshot at or before `first` (whole blocks start at line 0).
  const snap = whole || !snapshots ? 0 : Math.min(Math.floor(first / SNAPSHOT_LINES), nSnaps);
  const startLine = snap * SNAPSHOT_LINES;
  // All snapshots (a whole block checks each; version 2 stores them row-major, so a range parses all too), row-major.
  let snapVals: Float64Array | null = null;
  // Version 3, a range: the start of each value's line in SNAP, and value v of snapshot `snap` on demand.
  let snapAt: (v: number) => number = (v) => (snapVals as Float64Array)[(snap - 1) * perSnap + v];
  if (snapshots) {
    const sb = head[STREAM.SNAP] as Buffer;
    if (!v3) {
      snapVals = new Float64Array(nSnaps * perSnap);
      let at = 0;
      for (let j = 0; j < nSnaps * perSnap; j++) {
        if (at >= sb.length) throw lie(`it holds ${j} values, ${nSnaps * perSnap} expected`);
        const d = readInt(sb, at);
        at = scanEnd;
        if (!Number.isSafeInteger(d)) throw lie(`value ${j} is not a decimal`);
        const prev = j >= perSnap ? snapVals[j - perSnap] : j % perSnap === 1 ? -1 : 0;
        snapVals[j] = prev + d;
      }
      if (at !== sb.length) throw lie(`it holds more than ${nSnaps * perSnap} values`);
    } else {
      const starts = nSnaps === 0 ? [0] : lineStarts(sb);
      if (starts === null || (nSnaps === 0 ? sb.length !== 0 : starts.length !== perSnap + 1)) throw lie(`it holds ${starts === null ? "a torn" : starts.length - 1} lines, ${nSnaps === 0 ? 0 : perSnap} expected`);
      if (whole) {
        snapVals = new Float64Array(nSnaps * perSnap);
        if (nSnaps > 0) for (let v = 0; v < perSnap; v++) sumSnapLine(sb, starts, v, nSnaps, nSnaps, perSnap, lie, snapVals);
      } else {
        const memo = new Float64Array(perSnap).fill(Number.NaN);
        snapAt = (v) => (Number.isNaN(memo[v]) ? (memo[v] = sumSnapLine(sb, starts, v, snap, nSnaps, perSnap, lie)) : memo[v]);
      }
    }
  }

  // Scan ROWS and LINELEN: each line's shape and length, from the block's start (version 3, a
  // range: from its snapshot's positions, up to the last line asked for).
  const shapeOf = new Int32Array(b.lines);
  const lenOf = new Float64Array(b.lines);
  let rAt = 0;
  let lAt = 0;
  let scanFrom = 0;
  let offsetAtStart = 0;
  if (v3 && snap > 0) {
    rAt = snapAt(8);
    lAt = snapAt(9);
    offsetAtStart = snapAt(10);
    if (!(rAt >= 0 && lAt >= 0 && offsetAtStart >= 0) || !atBoundary(rows, rAt) || !atBoundary(lens, lAt)) throw lie(`snapshot ${snap} points between rows`);
    scanFrom = startLine;
  }
  const scanTo = v3 && !whole ? last : b.lines - 1;
  scanRows(rows, lens, rAt, lAt, scanFrom, scanTo, b.lines, meta.nShapes, shapeOf, lenOf, whole && v3 ? snapVals : null, perSnap, bad, lie);
  rAt = rowsEnd;
  lAt = lensEnd;
  if (scanTo === b.lines - 1 && (rAt !== rows.length || lAt !== lens.length)) throw bad(`more rows than the block's ${b.lines} lines`);

  // Lines before `first` are never the block's last: each has its newline.
  const startOffset = offsetAtStart + linesBytes(lenOf, scanFrom, first - 1);

  // The streams this range needs.
  let st: (Buffer | null)[];
  let need: Uint8Array | null = null;
  if (whole) st = head;
  else {
    // Only the streams of the lines asked for: a line before them moves the cursors of the
    // streams those lines read (and T, and the last piece id), no other (their positions at the
    // snapshot are known). Lines of a block use many columns; one line a few of them.
    need = new Uint8Array(nStreams);
    for (let i = startLine; i < first; i++) if (shapeOf[i] > 0) meta.use(shapeOf[i] - 1);
    for (let i = first; i <= last; i++) {
      const sh = shapeOf[i];
      if (sh === 0) {
        need[STREAM.VERBATIM] = 1;
        continue;
      }
      meta.use(sh - 1);
      const kind = meta.kinds[sh - 1];
      for (let h = 0; h < kind.length; h++) {
        const c = kind[h];
        if (c === 3) need[STREAM.ID_MS] = need[STREAM.ID_RAND] = 1;
        // A timestamp is an offset from T, which the ids before it move.
        else if (c === 4) need[STREAM.TS] = need[STREAM.ID_MS] = 1;
        else if (c === 5) need[STREAM.TEXT] = need[STREAM.TEXTN] = 1;
      }
      for (const c of meta.shapeCols[sh - 1]) need[firstCol + c] = 1;
    }
    const want = need;
    st = unpackRecord(record, path, (s) => want[s] === 1, firstCol, mem.scratch);
    st[STREAM.META] = head[STREAM.META];
    st[STREAM.ROWS] = rows;
    st[STREAM.LINELEN] = lens;
  }

  // Cursors.
  const colBuf: (Buffer | null)[] = new Array(meta.nCols);
  const colAt = new Int32Array(meta.nCols);
  for (let c = 0; c < meta.nCols; c++) colBuf[c] = st[firstCol + c];
  const verbatim = st[STREAM.VERBATIM];
  const idMs = st[STREAM.ID_MS];
  const idRand = st[STREAM.ID_RAND];
  const ts = st[STREAM.TS];
  const text = st[STREAM.TEXT];
  const textn = st[STREAM.TEXTN];
  let vAt = 0;
  let iAt = 0;
  let rndAt = 0;
  let tsAt = 0;
  let tAt = 0;
  let tnAt = 0;
  let prevRef = -1;
  let T = 0;
  if (snap > 0) {
    T = snapAt(0);
    prevRef = snapAt(1);
    vAt = snapAt(2);
    iAt = snapAt(3);
    rndAt = snapAt(4);
    tsAt = snapAt(5);
    tAt = snapAt(6);
    tnAt = snapAt(7);
    for (let c = 0; c < meta.nCols; c++) {
      // Version 3 ranges take only the positions of the columns they read.
      if (v3 && need !== null && need[firstCol + c] !== 1) continue;
      const p = snapAt(colsAt + c);
      colAt[c] = p;
      if (colAt[c] !== p) throw lie(`snapshot ${snap} puts column ${c} at ${p}`);
    }
    if (prevRef < -1 || ![vAt, iAt, rndAt, tsAt, tAt, tnAt].every((p) => p >= 0) || !atBoundary(verbatim, vAt) || !atBoundary(idMs, iAt)
      || !atBoundary(idRand, rndAt) || !atBoundary(ts, tsAt) || !atBoundary(text, tAt) || !atBoundary(textn, tnAt)
      || !colAt.every((p, c) => p >= 0 && atBoundary(colBuf[c], p))) {
      throw lie(`snapshot ${snap} points between values`);
    }
  }

  // Lines startLine..first − 1 only advance the cursors of the streams decoded (no bytes built,
  // no pack frame read; a stream not decoded is one the lines asked for do not read). Values of
  // one stream follow each other whatever lines hold them, so each stream skips the number of
  // values those lines put in it, in one loop (T and the last piece id are sums).
  if (first > startLine) {
    const perShape = new Int32Array(meta.nShapes + 1);
    for (let i = startLine; i < first; i++) perShape[shapeOf[i]]++;
    const skip = new Int32Array(meta.nCols);
    let ids = 0;
    let stamps = 0;
    let texts = 0;
    for (let k = 1; k <= meta.nShapes; k++) {
      const m = perShape[k];
      if (m === 0) continue;
      const kind = meta.kinds[k - 1];
      for (let h = 0; h < kind.length; h++) {
        const hole = kind[h];
        if (hole === 3) ids += m;
        else if (hole === 4) stamps += m;
        else if (hole === 5) texts += m;
      }
      for (const c of meta.shapeCols[k - 1]) skip[c] += m;
    }
    const skipped = (what: string, buf: Buffer, at: number, n: number): number => {
      const e = skipValues(buf, at, n);
      if (e < 0) throw bad(`the lines before line ${first} run out of ${what}`);
      return e;
    };
    if (verbatim !== null) vAt = skipped("verbatim lines", verbatim, vAt, perShape[0]);
    for (let c = 0; c < meta.nCols; c++) {
      const cb = colBuf[c];
      if (skip[c] > 0 && cb !== null && cb !== undefined) colAt[c] = skipped(`column ${c}`, cb, colAt[c], skip[c]);
    }
    if (idMs !== null) {
      for (let j = 0; j < ids; j++) {
        const d = readInt(idMs, iAt);
        if (!Number.isSafeInteger(d)) throw bad(`the lines before line ${first} run out of ids`);
        iAt = scanEnd;
        T += d;
      }
      if (idRand !== null) rndAt = skipped("ids", idRand, rndAt, ids);
    }
    if (ts !== null) tsAt = skipped("timestamps", ts, tsAt, stamps);
    if (text !== null && textn !== null) {
      let pieces = 0;
      for (let j = 0; j < texts; j++) {
        const np = readInt(textn, tnAt);
        tnAt = scanEnd;
        if (!(np >= 1)) throw bad(`the lines before line ${first} have a bad text value`);
        pieces += np;
      }
      for (let j = 0; j < pieces; j++) {
        const te = text.indexOf(0x0a, tAt);
        if (te < 0) throw bad(`the lines before line ${first} run out of text pieces`);
        if (text[tAt] !== 0x27) {
          const d = readInt(text, tAt);
          if (!Number.isSafeInteger(d)) throw bad(`the lines before line ${first} name a bad piece`);
          prevRef += 1 + d;
        }
        tAt = te + 1;
      }
    }
  }

  // The output: lines first..last.
  let size = linesBytes(lenOf, first, last);
  if (last === b.lines - 1 && b.lastUnterminated) size--;
  if (whole && size !== b.originalBytes) throw extError("EXT_INDEX_INVALID", `a block's lines add up to ${size} bytes, its index says ${b.originalBytes}`, path);
  // Its own ArrayBuffer (never the shared pool): worker threads transfer it (and get it back to reuse).
  // Kept (`mem.keep`): made only if the kernel gives the block up.
  const keep = whole && mem.keep === true && mem.js !== true;
  const outOf = () => (whole && mem.out !== undefined && mem.out.length >= size ? mem.out.subarray(0, size) : whole ? Buffer.allocUnsafeSlow(size) : Buffer.allocUnsafe(size));
  const out = keep ? EMPTY : outOf();
  const n = last - first + 1;
  const starts = new Int32Array(Math.max(0, n));
  const ends = new Int32Array(Math.max(0, n));
  const offsets = new Float64Array(Math.max(0, n));
  const job: RebuildJob = {
    first, last, size, out, shapeOf, lenOf, meta, verbatim, idMs, idRand, ts, text, textn, colBuf, colAt,
    vAt, iAt, rndAt, tsAt, tAt, tnAt, prevRef, T, pieceBytes, starts, ends, offsets, startOffset,
    blockLines: b.lines, lastUnterminated: b.lastUnterminated, snapVals: whole ? snapVals : null, perSnap, colsAt, bad, lie, frames: mem.frames,
    keep, region: -1,
  };
  // Whole blocks: the WebAssembly kernel, else (or when it gives up) the JavaScript loop.
  let o = whole && mem.js !== true ? wasmRebuild(job) : -1;
  if (o < 0) {
    if (keep) job.out = outOf();
    o = rebuildLines(job);
  }
  if (whole && o !== b.originalBytes) {
    freeKeptRegion(job.region);
    throw extError("EXT_INDEX_INVALID", `a block rebuilds to ${o} bytes, its index says ${b.originalBytes}`, path);
  }
  return { data: job.out, starts, ends, offsets, region: job.region };
}
