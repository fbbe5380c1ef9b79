/**
 * One block of the extended diet: consecutive journal lines encoded as a shape per line plus typed
 * value streams (see `docs/extended-diet.md`, "Block record"). Pure and synchronous: the diet runs
 * it in worker threads, readers and restore in whatever thread reads.
 *
 * A line is encoded only when it is valid UTF-8, parses as a JSON object and
 * `JSON.stringify(JSON.parse(line)) === line` (the invertibility proof: the encoder's walk is that
 * serialisation, hole by hole); every other line (blank, corrupt, non-canonical such as `1e5`,
 * `-0`, `1.0`, duplicate keys, escapes like `\/`, the unterminated final fragment) is stored
 * verbatim, byte for byte.
 */
import {
  BLOCK_MAGIC, FIRST_COLUMN_STREAM, HOLE, PIECE_MIN_CHARS, STREAM, TEXT_MIN_CHARS, extError,
} from "./format.js";
import { zstdCompress, zstdDecodeExact } from "./zstd.js";

/** What the column pass of a block yields: every stream but TEXT/TEXTN compressed, and the text values in order. */
export interface ColumnBlock {
  /** Compressed streams by index (TEXT and TEXTN are empty placeholders, filled by `sealBlock`). */
  streams: Buffer[];
  rawSizes: number[];
  /** Escaped contents of the block's text values, in hole order. */
  texts: string[];
  lines: number;
  /** Complete lines that JSON.parse accepts (the manifest's totalEvents counts these). */
  events: number;
  encodedLines: number;
}

const ID_RE = /^(0|[1-9][0-9]{0,15})-([0-9a-z]{0,16})$/;
/** A string needs JSON escaping (or may hold a lone surrogate) exactly when this matches. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

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

class Encoder {
  readonly streams: string[][] = [[], [], [], [], [], [], [], [], []];
  readonly verbatim: Buffer[] = [];
  readonly shapes = new Map<string, number>();
  readonly shapeCols: number[][] = [];
  readonly cols: string[] = [];
  readonly colValues: string[][] = [];
  readonly roots = new Map<string, PathNode>();
  readonly texts: string[] = [];
  prevTime = 0;
  // Per line:
  tpl = "";
  lineCols: number[] = [];
  type = "";

  newCol(name: string): number {
    this.cols.push(name);
    this.colValues.push([]);
    return this.cols.length - 1;
  }

  str(x: string, at: PathNode): void {
    const content = NEEDS_ESCAPE.test(x) ? JSON.stringify(x).slice(1, -1) : x;
    if (content.length >= TEXT_MIN_CHARS) {
      this.texts.push(content);
      this.tpl += HOLE.TEXT;
      return;
    }
    if (at.s < 0) at.s = this.newCol(`s${this.type}\u0000${at.path}`);
    this.colValues[at.s].push(content);
    this.lineCols.push(at.s);
    this.tpl += HOLE.STRING;
  }

  walk(x: unknown, at: PathNode): void {
    if (typeof x === "string") return this.str(x, at);
    if (typeof x === "number") {
      if (at.n < 0) at.n = this.newCol(`n${this.type}\u0000${at.path}`);
      this.colValues[at.n].push(String(x));
      this.lineCols.push(at.n);
      this.tpl += HOLE.NUMBER;
      return;
    }
    if (x === null || typeof x === "boolean") {
      this.tpl += String(x);
      return;
    }
    if (Array.isArray(x)) {
      this.tpl += "[";
      const items = (at.items ??= node(`${at.path}[]`));
      for (let i = 0; i < x.length; i++) {
        if (i > 0) this.tpl += ",";
        this.walk(x[i], items);
      }
      this.tpl += "]";
      return;
    }
    this.object(x as Record<string, unknown>, at);
  }

  object(o: Record<string, unknown>, at: PathNode): void {
    this.tpl += "{";
    let first = true;
    for (const k in o) {
      if (!first) this.tpl += ",";
      first = false;
      this.tpl += keyLit(k);
      let kid = at.kids.get(k);
      if (kid === undefined) {
        kid = node(`${at.path}.${k}`);
        at.kids.set(k, kid);
      }
      this.walk(o[k], kid);
    }
    this.tpl += "}";
  }

  /** Encode one canonical event object (top level: typed id and timestamp, type in the template). */
  event(v: Record<string, unknown>): number {
    this.tpl = "{";
    this.lineCols = [];
    this.type = typeof v.type === "string" ? v.type : "";
    let root = this.roots.get(this.type);
    if (root === undefined) {
      root = node("");
      this.roots.set(this.type, root);
    }
    let first = true;
    for (const k in v) {
      if (!first) this.tpl += ",";
      first = false;
      this.tpl += keyLit(k);
      const x = v[k];
      if (k === "id" && typeof x === "string" && this.id(x)) continue;
      if (k === "timestamp" && typeof x === "string" && this.timestamp(x)) continue;
      if (k === "type" && typeof x === "string") {
        this.tpl += JSON.stringify(x);
        continue;
      }
      let kid = root.kids.get(k);
      if (kid === undefined) {
        kid = node(`.${k}`);
        root.kids.set(k, kid);
      }
      this.walk(x, kid);
    }
    this.tpl += "}";
    let s = this.shapes.get(this.tpl);
    if (s === undefined) {
      s = this.shapes.size + 1;
      this.shapes.set(this.tpl, s);
      this.shapeCols.push(this.lineCols);
    }
    return s;
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

/** Values joined with a `\n` after each (an empty list is an empty stream). */
function joined(values: string[]): Buffer {
  return values.length === 0 ? Buffer.alloc(0) : Buffer.from(`${values.join("\n")}\n`, "utf8");
}

/**
 * The column pass over `input` (whole lines; only the journal's last block may end without `\n`,
 * and that fragment stays verbatim): every stream but the text streams, compressed at `level`.
 */
export function encodeColumns(input: Buffer, level: number): ColumnBlock {
  const e = new Encoder();
  const text = input.toString("utf8");
  const strs = text.split("\n");
  const endsWithNewline = input.length > 0 && input[input.length - 1] === 0x0a;
  // split gives one extra "" after a final \n; an unterminated fragment is the last element.
  const lines = endsWithNewline || input.length === 0 ? strs.length - 1 : strs.length;
  const rows: string[] = new Array(lines);
  const lens: string[] = new Array(lines);
  let pos = 0;
  let events = 0;
  let encoded = 0;
  for (let i = 0; i < lines; i++) {
    const nl = input.indexOf(0x0a, pos);
    const end = nl < 0 ? input.length : nl;
    const terminated = nl >= 0;
    const s = strs[i];
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
        && (!s.includes("\uFFFD") || input.subarray(pos, end).equals(Buffer.from(s, "utf8")))
        && JSON.stringify(v) === s) {
        shape = e.event(v as Record<string, unknown>);
        encoded++;
      }
    }
    if (shape === 0) e.verbatim.push(input.subarray(pos, end), NL);
    rows[i] = String(shape);
    pos = end + 1;
  }
  const shapes: [string, number[]][] = [];
  let k = 0;
  for (const tpl of e.shapes.keys()) shapes.push([tpl, e.shapeCols[k++]]);
  const raw: Buffer[] = new Array(FIRST_COLUMN_STREAM + e.cols.length);
  raw[STREAM.META] = Buffer.from(JSON.stringify({ cols: e.cols, shapes }), "utf8");
  raw[STREAM.ROWS] = joined(rows);
  raw[STREAM.LINELEN] = joined(lens);
  raw[STREAM.VERBATIM] = Buffer.concat(e.verbatim);
  for (const st of [STREAM.ID_MS, STREAM.ID_RAND, STREAM.TS]) raw[st] = joined(e.streams[st]);
  raw[STREAM.TEXT] = Buffer.alloc(0);
  raw[STREAM.TEXTN] = Buffer.alloc(0);
  for (let c = 0; c < e.cols.length; c++) raw[FIRST_COLUMN_STREAM + c] = joined(e.colValues[c]);
  return {
    streams: raw.map((r) => (r.length === 0 ? r : zstdCompress(r, level))),
    rawSizes: raw.map((r) => r.length),
    texts: e.texts,
    lines,
    events,
    encodedLines: encoded,
  };
}

/** The pack's side of text encoding: piece ids for pieces worth storing once. */
export interface PieceStore {
  /** The id of `piece`, adding it (to the pack being written) when new. */
  idOf(piece: string): number;
}

/**
 * Encode a block's text values against the pack: each value is split at its escaped newlines
 * (the two characters `\` `n`; split and joined with the same separator, so exact whatever they
 * mean); pieces of PIECE_MIN_CHARS or more become references, shorter ones stay inline.
 * TEXT gets one token per piece (`'` + the piece, or the id as a signed delta from the previous
 * reference + 1), TEXTN the number of pieces per value.
 */
export function textStreams(texts: string[], store: PieceStore): { text: Buffer; textn: Buffer; refs: number } {
  const tokens: string[] = [];
  const counts: string[] = new Array(texts.length);
  let prev = -1;
  let refs = 0;
  for (let i = 0; i < texts.length; i++) {
    const pieces = texts[i].split("\\n");
    counts[i] = String(pieces.length);
    for (const p of pieces) {
      if (p.length < PIECE_MIN_CHARS) tokens.push(`'${p}`);
      else {
        const id = store.idOf(p);
        tokens.push(String(id - prev - 1));
        prev = id;
        refs++;
      }
    }
  }
  return { text: joined(tokens), textn: joined(counts), refs };
}

/** The block record: the column pass's streams plus the text streams compressed at `level`. */
export function sealBlock(c: ColumnBlock, text: Buffer, textn: Buffer, level: number): Buffer {
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

/** Decompress every stream of a record; EXT_CORRUPT when anything does not fit. */
export function unpackRecord(record: Buffer, path?: string): Buffer[] {
  const bad = (why: string) => extError("EXT_CORRUPT", `a block record is corrupt: ${why}`, path);
  if (record.length < 8 || record.readUInt32LE(0) !== BLOCK_MAGIC) throw bad("no block magic");
  const n = record.readUInt32LE(4);
  if (n < FIRST_COLUMN_STREAM || 8 + 8 * n > record.length) throw bad("stream table");
  const out: Buffer[] = new Array(n);
  let at = 8 + 8 * n;
  for (let s = 0; s < n; s++) {
    const z = record.readUInt32LE(8 + 8 * s);
    const size = record.readUInt32LE(12 + 8 * s);
    if (at + z > record.length || (z === 0) !== (size === 0)) throw bad(`stream ${s} does not fit`);
    if (size === 0) out[s] = Buffer.alloc(0);
    else {
      const d = zstdDecodeExact(record.subarray(at, at + z), size);
      if (d === null) throw bad(`stream ${s} does not decode to its ${size} bytes`);
      out[s] = d;
    }
    at += z;
  }
  if (at !== record.length) throw bad("trailing bytes");
  return out;
}

/** One decoded line: its text (encoded lines) or its raw bytes (verbatim lines). */
export type DecodedLine = string | Buffer;

/** Split a `\n`-terminated stream into its values. */
function values(b: Buffer): string[] {
  if (b.length === 0) return [];
  const v = b.toString("utf8").split("\n");
  v.pop();
  return v;
}

/** Resolves a pack piece id to its text (the pack reader; it checks the id and the frame). */
export type PieceOf = (id: number) => string;

/**
 * Rebuild lines `from`..`to` (inclusive, relative to the block) of a record of `lines` lines;
 * the rows before `from` only advance the cursors. EXT_CORRUPT when the streams are inconsistent
 * (counts, lengths, shapes, a line whose rebuilt length differs from LINELEN).
 */
export function decodeBlock(record: Buffer, lines: number, pieceOf: PieceOf, path?: string, from = 0, to = lines - 1): { lines: DecodedLine[]; lens: string[] } {
  const st = unpackRecord(record, path);
  const bad = (why: string) => extError("EXT_CORRUPT", `a block does not decode: ${why}`, path);
  let meta: { cols: string[]; shapes: [string, number[]][] };
  try {
    meta = JSON.parse(st[STREAM.META].toString("utf8"));
  } catch {
    throw bad("its shape table is not JSON");
  }
  if (!Array.isArray(meta?.cols) || !Array.isArray(meta.shapes) || st.length !== FIRST_COLUMN_STREAM + meta.cols.length) throw bad("shape table");
  const rows = values(st[STREAM.ROWS]);
  const lens = values(st[STREAM.LINELEN]);
  if (rows.length !== lines || lens.length !== lines) throw bad(`${rows.length} rows for ${lines} lines`);
  const nShapes = meta.shapes.length;
  const pieces: string[][] = new Array(nShapes);
  const kinds: string[] = new Array(nShapes);
  const shapeCols: number[][] = new Array(nShapes);
  for (let k = 0; k < nShapes; k++) {
    const sh = meta.shapes[k];
    if (!Array.isArray(sh) || typeof sh[0] !== "string" || !Array.isArray(sh[1])) throw bad(`shape ${k + 1}`);
    pieces[k] = sh[0].split(/[\x01-\x05]/);
    kinds[k] = sh[0].replace(/[^\x01-\x05]/g, "");
    shapeCols[k] = sh[1];
  }
  const cols = meta.cols.map((_, c) => values(st[FIRST_COLUMN_STREAM + c]));
  const colAt = new Array<number>(cols.length).fill(0);
  const idMs = values(st[STREAM.ID_MS]);
  const idRand = values(st[STREAM.ID_RAND]);
  const ts = values(st[STREAM.TS]);
  const text = values(st[STREAM.TEXT]);
  const textn = values(st[STREAM.TEXTN]);
  const verbatim = st[STREAM.VERBATIM];
  let iId = 0;
  let iTs = 0;
  let iText = 0;
  let iTextN = 0;
  let prevRef = -1;
  let vAt = 0;
  let prevTime = 0;
  const out: DecodedLine[] = [];
  const last = Math.min(to, lines - 1);
  const textValue = (build: boolean): string | undefined => {
    const n = Number(textn[iTextN++]);
    if (!(n >= 1) || iText + n > text.length) return undefined;
    const parts: string[] | null = build ? new Array(n) : null;
    for (let j = 0; j < n; j++) {
      const tok = text[iText++];
      if (tok.charCodeAt(0) === 39) {
        if (parts) parts[j] = tok.slice(1);
      } else {
        const id = prevRef + 1 + Number(tok);
        if (!Number.isSafeInteger(id) || id < 0) return undefined;
        prevRef = id;
        if (parts) parts[j] = pieceOf(id);
      }
    }
    return parts ? parts.join("\\n") : "";
  };
  for (let i = 0; i <= last; i++) {
    const shape = Number(rows[i]);
    const build = i >= from;
    if (shape === 0) {
      const nl = verbatim.indexOf(0x0a, vAt);
      if (nl < 0 || nl - vAt !== Number(lens[i])) throw bad(`verbatim line ${i} does not match its length`);
      if (build) out.push(verbatim.subarray(vAt, nl));
      vAt = nl + 1;
      continue;
    }
    const p = pieces[shape - 1];
    if (p === undefined) throw bad(`line ${i} names shape ${shape}`);
    const kind = kinds[shape - 1];
    const lineCols = shapeCols[shape - 1];
    let s = p[0];
    let ci = 0;
    for (let h = 0; h < kind.length; h++) {
      let v: string | undefined;
      switch (kind.charCodeAt(h)) {
        case 1: {
          const c = lineCols[ci++];
          v = cols[c]?.[colAt[c]++];
          if (v !== undefined) v = `"${v}"`;
          break;
        }
        case 2: {
          const c = lineCols[ci++];
          v = cols[c]?.[colAt[c]++];
          break;
        }
        case 3: {
          const d = idMs[iId];
          const r = idRand[iId++];
          if (d !== undefined && r !== undefined) {
            prevTime += Number(d);
            v = `"${prevTime}-${r}"`;
          }
          break;
        }
        case 4: {
          const d = ts[iTs++];
          if (d !== undefined) v = build ? `"${new Date(prevTime + Number(d)).toISOString()}"` : "";
          break;
        }
        case 5: {
          const t = textValue(build);
          if (t !== undefined) v = `"${t}"`;
          break;
        }
      }
      if (v === undefined) throw bad(`line ${i} runs out of values`);
      if (build) s += v + p[h + 1];
    }
    if (build) {
      if (Buffer.byteLength(s) !== Number(lens[i])) throw bad(`line ${i} rebuilds to a length other than its ${lens[i]} bytes`);
      out.push(s);
    }
  }
  return { lines: out, lens };
}

/** The pack seen as bytes: piece `id` is `buf[start, end)` (the reader checks the id and the frame). */
export type PieceBytes = (id: number) => { buf: Buffer; start: number; end: number };

/** Parse the signed decimal in `b[a, e)`; NaN when it is not one. */
function intAt(b: Buffer, a: number, e: number): number {
  let i = a;
  let neg = false;
  if (b[i] === 0x2d) {
    neg = true;
    i++;
  }
  if (i >= e) return Number.NaN;
  let v = 0;
  for (; i < e; i++) {
    const d = b[i] - 48;
    if (d < 0 || d > 9) return Number.NaN;
    v = v * 10 + d;
  }
  return neg ? -v : v;
}

let isoSecond = Number.NaN;
let isoPrefix = "";
/** `new Date(ms).toISOString()`, with the part up to the second cached (lines of one second share it). */
function isoOf(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== isoSecond) {
    const s = new Date(sec * 1000).toISOString();
    if (s.length !== 24) return new Date(ms).toISOString();
    isoSecond = sec;
    isoPrefix = s.slice(0, 20);
  }
  const m = ms - sec * 1000;
  return `${isoPrefix}${m < 10 ? "00" : m < 100 ? "0" : ""}${m}Z`;
}

/**
 * Rebuild a whole block straight into bytes: `originalBytes` bytes, lines separated by `\n` (the
 * last line without one when `lastUnterminated`). Values are copied from the decoded streams and
 * the pack without building strings. `ends[i]` is the offset just past line i's bytes (before its
 * `\n`). EXT_CORRUPT when the streams are inconsistent or a line's length differs from LINELEN.
 */
export function decodeBlockBytes(
  record: Buffer, lines: number, originalBytes: number, lastUnterminated: boolean, pieceBytes: PieceBytes, path?: string,
): { data: Buffer; ends: Int32Array } {
  const st = unpackRecord(record, path);
  const bad = (why: string) => extError("EXT_CORRUPT", `a block does not decode: ${why}`, path);
  let meta: { cols: string[]; shapes: [string, number[]][] };
  try {
    meta = JSON.parse(st[STREAM.META].toString("utf8"));
  } catch {
    throw bad("its shape table is not JSON");
  }
  if (!Array.isArray(meta?.cols) || !Array.isArray(meta.shapes) || st.length !== FIRST_COLUMN_STREAM + meta.cols.length) throw bad("shape table");
  const nShapes = meta.shapes.length;
  const segs: Buffer[][] = new Array(nShapes);
  const kinds: Uint8Array[] = new Array(nShapes);
  const shapeCols: number[][] = new Array(nShapes);
  for (let k = 0; k < nShapes; k++) {
    const sh = meta.shapes[k];
    if (!Array.isArray(sh) || typeof sh[0] !== "string" || !Array.isArray(sh[1])) throw bad(`shape ${k + 1}`);
    segs[k] = sh[0].split(/[\x01-\x05]/).map((x) => Buffer.from(x, "utf8"));
    kinds[k] = Uint8Array.from(sh[0].replace(/[^\x01-\x05]/g, ""), (c) => c.charCodeAt(0));
    shapeCols[k] = sh[1];
  }
  const nCols = meta.cols.length;
  const colBuf: Buffer[] = new Array(nCols);
  const colAt = new Int32Array(nCols);
  for (let c = 0; c < nCols; c++) colBuf[c] = st[FIRST_COLUMN_STREAM + c];
  const rows = st[STREAM.ROWS];
  const lens = st[STREAM.LINELEN];
  const verbatim = st[STREAM.VERBATIM];
  const idMs = st[STREAM.ID_MS];
  const idRand = st[STREAM.ID_RAND];
  const ts = st[STREAM.TS];
  const text = st[STREAM.TEXT];
  const textn = st[STREAM.TEXTN];
  let rAt = 0;
  let lAt = 0;
  let vAt = 0;
  let iAt = 0;
  let rndAt = 0;
  let tsAt = 0;
  let tAt = 0;
  let tnAt = 0;
  let prevRef = -1;
  let T = 0;
  // Its own ArrayBuffer (never the shared pool): worker threads transfer it.
  const out = Buffer.allocUnsafeSlow(originalBytes);
  const ends = new Int32Array(lines);
  let o = 0;
  try {
  for (let i = 0; i < lines; i++) {
    let nl = rows.indexOf(0x0a, rAt);
    if (nl < 0) throw bad(`${i} rows for ${lines} lines`);
    const shape = intAt(rows, rAt, nl);
    rAt = nl + 1;
    nl = lens.indexOf(0x0a, lAt);
    if (nl < 0) throw bad(`line ${i} has no length`);
    const len = intAt(lens, lAt, nl);
    lAt = nl + 1;
    const start = o;
    if (!(len >= 0) || start + len > originalBytes) throw bad(`line ${i} does not fit its block`);
    if (shape === 0) {
      nl = verbatim.indexOf(0x0a, vAt);
      if (nl < 0 || nl - vAt !== len) throw bad(`verbatim line ${i} does not match its length`);
      verbatim.copy(out, o, vAt, nl);
      o += len;
      vAt = nl + 1;
    } else {
      const k = shape - 1;
      const seg = segs[k];
      if (seg === undefined) throw bad(`line ${i} names shape ${shape}`);
      const kind = kinds[k];
      const lc = shapeCols[k];
      let ci = 0;
      o += seg[0].copy(out, o);
      for (let h = 0; h < kind.length; h++) {
        switch (kind[h]) {
          case 1:
          case 2: {
            const c = lc[ci++];
            const b = colBuf[c];
            if (b === undefined) throw bad(`line ${i} names column ${c}`);
            const e = b.indexOf(0x0a, colAt[c]);
            if (e < 0) throw bad(`line ${i} runs out of column ${c}`);
            if (kind[h] === 1) out[o++] = 0x22;
            o += b.copy(out, o, colAt[c], e);
            if (kind[h] === 1) out[o++] = 0x22;
            colAt[c] = e + 1;
            break;
          }
          case 3: {
            const e = idMs.indexOf(0x0a, iAt);
            const r = idRand.indexOf(0x0a, rndAt);
            if (e < 0 || r < 0) throw bad(`line ${i} runs out of ids`);
            T += intAt(idMs, iAt, e);
            iAt = e + 1;
            out[o++] = 0x22;
            o += out.write(String(T), o, "latin1");
            out[o++] = 0x2d;
            o += idRand.copy(out, o, rndAt, r);
            out[o++] = 0x22;
            rndAt = r + 1;
            break;
          }
          case 4: {
            const e = ts.indexOf(0x0a, tsAt);
            if (e < 0) throw bad(`line ${i} runs out of timestamps`);
            const ms = T + intAt(ts, tsAt, e);
            tsAt = e + 1;
            if (!Number.isFinite(ms)) throw bad(`line ${i} has a bad timestamp`);
            out[o++] = 0x22;
            o += out.write(isoOf(ms), o, "latin1");
            out[o++] = 0x22;
            break;
          }
          case 5: {
            const e = textn.indexOf(0x0a, tnAt);
            if (e < 0) throw bad(`line ${i} runs out of text values`);
            const n = intAt(textn, tnAt, e);
            tnAt = e + 1;
            if (!(n >= 1)) throw bad(`line ${i} has a bad text value`);
            out[o++] = 0x22;
            for (let j = 0; j < n; j++) {
              if (j > 0) {
                out[o++] = 0x5c;
                out[o++] = 0x6e;
              }
              const te = text.indexOf(0x0a, tAt);
              if (te < 0) throw bad(`line ${i} runs out of text pieces`);
              if (text[tAt] === 0x27) o += text.copy(out, o, tAt + 1, te);
              else {
                const id = prevRef + 1 + intAt(text, tAt, te);
                if (!Number.isSafeInteger(id) || id < 0) throw bad(`line ${i} names a bad piece`);
                prevRef = id;
                const p = pieceBytes(id);
                o += p.buf.copy(out, o, p.start, p.end);
              }
              tAt = te + 1;
            }
            out[o++] = 0x22;
            break;
          }
          default:
            throw bad(`shape ${shape} has an unknown hole`);
        }
        o += seg[h + 1].copy(out, o);
      }
      if (o - start !== len) throw bad(`line ${i} rebuilds to ${o - start} bytes, not its ${len}`);
    }
    ends[i] = o;
    if (i < lines - 1 || !lastUnterminated) {
      if (o >= originalBytes) throw bad(`line ${i} does not fit its block`);
      out[o++] = 0x0a;
    }
  }
  } catch (e) {
    // Buffer.copy past the end of the output (a lying stream) throws a RangeError.
    if (e instanceof RangeError) throw bad(e.message);
    throw e;
  }
  if (o !== originalBytes) throw extError("EXT_INDEX_INVALID", `a block rebuilds to ${o} bytes, its index says ${originalBytes}`, path);
  return { data: out, ends };
}
