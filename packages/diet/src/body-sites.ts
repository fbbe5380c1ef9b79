/**
 * Which bodies a diet moves (format §5.1–5.2) and the invertibility proof. Pure: no I/O.
 *
 * A line is rewritten only when it is canonical (`JSON.stringify(JSON.parse(line)) === line`,
 * which rules out duplicate keys, unusual escapes such as `\u00e9` or `\/`, and whitespace),
 * the line and each moved body are ≥ 4,096 bytes, the body is a well-formed string, and the
 * rewritten line rehydrates to the identical bytes (which implies the canonical form). Anything
 * else stays verbatim.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { JournalError } from "@hankweave-journal/core";
import { sniffPrefixType, typeSniffer } from "@hankweave-journal/journal";
import { findPointers } from "./rehydrate.js";
import { escapeJsonBytes } from "./json-escape.js";
import { movesExtendedSites, type DietKind } from "./diet-kind.js";

/** Lines and bodies below this many bytes stay inline (format §5.1). */
export const CAS_THRESHOLD_BYTES = 4096;

/** One body site: the event type, the path from `data` to the containing object, the key. */
export interface BodySite {
  type: string;
  container: readonly string[];
  key: string;
}

const COMPATIBLE_SITES: readonly BodySite[] = [
  { type: "file.updated", container: [], key: "content" },
  { type: "state.snapshot", container: ["recentFileAccess"], key: "content" },
];
const EXTENDED_SITES: readonly BodySite[] = [
  ...COMPATIBLE_SITES,
  { type: "assistant.action", container: [], key: "content" },
  { type: "assistant.action", container: [], key: "toolInput" },
  { type: "tool.result", container: [], key: "result" },
  { type: "sentinel.output", container: [], key: "content" },
];

// A lone surrogate would not survive UTF-8 encoding of the body (with /u, \p{Cs} never matches a pair).
const LONE_SURROGATE_RE = /\p{Cs}/u;

/** The body sites a diet of this kind moves (`compatible` and `seekable`: two; `extended`: more, opt-in). */
export function sitesOf(kind: DietKind): readonly BodySite[] {
  return movesExtendedSites(kind) ? EXTENDED_SITES : COMPATIBLE_SITES;
}

const COMPATIBLE_SITE_TYPES = new Set(COMPATIBLE_SITES.map((s) => s.type));
const EXTENDED_SITE_TYPES = new Set(EXTENDED_SITES.map((s) => s.type));

/**
 * `sniffEventType` returns a type only from a canonical prefix `{"id":"…","timestamp":"…","type":"T"`
 * whose strings hold no escapes and that ends within the sniff's first 512 bytes: so a line whose
 * first TYPE_WINDOW_BYTES hold none of the bytes `"type":"T"` for a site type T has no body site,
 * and a native byte search proves it before any byte loop or parse (most lines of a journal).
 */
const TYPE_WINDOW_BYTES = 640;
const typeNeedles = (types: Set<string>): Buffer[] => [...types].map((t) => Buffer.from(`"type":${JSON.stringify(t)}`, "utf8"));
const COMPATIBLE_TYPE_NEEDLES = typeNeedles(COMPATIBLE_SITE_TYPES);
const EXTENDED_TYPE_NEEDLES = typeNeedles(EXTENDED_SITE_TYPES);

/** Per site, the raw bytes `"k":` of every key on its path from `data` (a canonical line holds them). */
const SITE_KEY_NEEDLES = new Map<BodySite, Buffer[]>(
  EXTENDED_SITES.map((site) => [site, ["data", ...site.container, site.key].map((k) => Buffer.from(`${JSON.stringify(k)}:`, "utf8"))]),
);

/** False when the line provably has no body site of `needles`' types (see TYPE_WINDOW_BYTES). */
function mayHoldSiteType(bytes: Buffer, needles: readonly Buffer[]): boolean {
  const head = bytes.length > TYPE_WINDOW_BYTES ? bytes.subarray(0, TYPE_WINDOW_BYTES) : bytes;
  for (const n of needles) if (head.indexOf(n) >= 0) return true;
  return false;
}

/** One body moved out of a line. */
export interface MovedBody {
  key: string;
  sha256: string;
  bytes: number;
  body: Buffer;
}

/** A rewritten line: the pointer line and the bodies it no longer holds. */
export interface LineRewrite {
  pointer: Buffer;
  bodies: MovedBody[];
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Replace `key` by `<key>Ref` at the same position of `obj` (a new object). */
function replaceKey(obj: Record<string, unknown>, key: string, ref: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    Object.defineProperty(out, k === key ? `${key}Ref` : k, {
      value: k === key ? ref : obj[k], enumerable: true, writable: true, configurable: true,
    });
  }
  return out;
}

/**
 * Decide one line: the rewrite when the proof holds, else null (the line stays verbatim).
 *
 * @example rewriteLine(Buffer.from(line), "compatible")?.bodies[0].sha256
 */
export function rewriteLine(bytes: Buffer, kind: DietKind): LineRewrite | null {
  if (bytes.length < CAS_THRESHOLD_BYTES) return null;
  if (!mayHoldSiteType(bytes, movesExtendedSites(kind) ? EXTENDED_TYPE_NEEDLES : COMPATIBLE_TYPE_NEEDLES)) return null;
  // The prefix alone (sniffEventType's walk of the whole line for a later top-level `type` key was
  // recompiled by V8 4 times per 100 MB): that case is refused after the parse, on the parsed keys.
  const type = sniffPrefixType(bytes);
  if (type === undefined || !(movesExtendedSites(kind) ? EXTENDED_SITE_TYPES : COMPATIBLE_SITE_TYPES).has(type)) return null;
  // A canonical line (the proof below requires one) spells each key of a site's path raw, `"k":`.
  if (!sitesOf(kind).some((site) => site.type === type && SITE_KEY_NEEDLES.get(site)!.every((n) => bytes.indexOf(n) >= 0))) return null;
  if (!isUtf8(bytes)) return null;
  const text = bytes.toString("utf8");
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(root) || !isPlainObject(root.data)) return null;
  // The line must be canonical, JSON.stringify(root) === text: the proof at the end implies it (the
  // rehydrated pointer line is JSON.stringify of root with each body spliced back as its own
  // JSON.stringify), so it is not checked here (a second serialisation of every body: with the
  // body decoded once more for the proof, ~0.1 CPU-s per 100 MB body-heavy journal). What sniffEventType would have refused by walking the line,
  // a later top-level key that may spell `type`: a canonical line holds no duplicate key, and a
  // key's raw text holds an escape exactly when JSON.stringify writes one for it.
  for (const k of Object.keys(root)) if (JSON.stringify(k).length !== k.length + 2) return null;
  let obj: Record<string, unknown> = root;
  const moved: MovedBody[] = [];
  for (const site of sitesOf(kind)) {
    if (site.type !== type) continue;
    // Walk to the container, rebuilding the path so the original object stays untouched.
    const chain: Record<string, unknown>[] = [obj.data as Record<string, unknown>];
    for (const step of site.container) {
      const next = chain[chain.length - 1][step];
      if (!isPlainObject(next)) break;
      chain.push(next);
    }
    if (chain.length !== site.container.length + 1) continue;
    const container = chain[chain.length - 1];
    const value = container[site.key];
    if (typeof value !== "string" || LONE_SURROGATE_RE.test(value)) continue;
    if (Object.prototype.hasOwnProperty.call(container, `${site.key}Ref`)) continue;
    const body = Buffer.from(value, "utf8");
    if (body.length < CAS_THRESHOLD_BYTES) continue;
    const sha256 = createHash("sha256").update(body).digest("hex");
    const ref = { sha256, bytes: body.length, encoding: "utf-8", ref: "cas" };
    let replaced: Record<string, unknown> = replaceKey(container, site.key, ref);
    for (let i = chain.length - 2; i >= 0; i--) replaced = { ...chain[i], [site.container[i]]: replaced };
    obj = { ...obj, data: replaced };
    moved.push({ key: site.key, sha256, bytes: body.length, body });
  }
  if (moved.length === 0) return null;
  const pointer = Buffer.from(JSON.stringify(obj), "utf8");
  // The proof: the pointer line holds exactly our pointers and rehydrates to the identical bytes,
  // as readers rehydrate it (spliceBodyBytes: spans found on the latin1 view, each replaced by
  // `"<key>":` and the body's JSON.stringify as UTF-8, escapeJsonBytes), compared in place with
  // no rehydrated line built (building it as a string cost ~50 ms more per 100 MB body-heavy journal).
  const spans = findPointers(pointer.toString("latin1"));
  if (spans.length !== moved.length) return null;
  let at = 0;
  let from = 0;
  for (const span of spans) {
    const m = moved.find((b) => b.sha256 === span.sha256);
    if (m === undefined || !matchesAt(bytes, at, pointer, from, span.start)) return null;
    at += span.start - from;
    const key = Buffer.from(`"${span.key}":`, "latin1");
    if (!matchesAt(bytes, at, key, 0, key.length)) return null;
    at += key.length;
    const escaped = escapeJsonBytes(m.body);
    if (!matchesAt(bytes, at, escaped, 0, escaped.length)) return null;
    at += escaped.length;
    from = span.end;
  }
  if (bytes.length - at !== pointer.length - from || !matchesAt(bytes, at, pointer, from, pointer.length)) return null;
  return { pointer, bodies: moved };
}

/** True when `bytes` holds `src[from, to)` at `at`. */
function matchesAt(bytes: Buffer, at: number, src: Buffer, from: number, to: number): boolean {
  return at + to - from <= bytes.length && bytes.compare(src, from, to, at, at + to - from) === 0;
}

const sniffCompatibleSite = typeSniffer(COMPATIBLE_SITES.map((s) => s.type));
/** The bytes every compatible site's pointer key holds; a line without them needs no CONTENT_REF_PRESENT check. */
export const CONTENT_REF_MARKER = Buffer.from('"contentRef"', "latin1");

/** A `contentRef` the reference runtime would treat as a CAS pointer: an object with `ref: "cas"`. */
export function isCasShaped(v: unknown): v is Record<string, unknown> {
  return isPlainObject(v) && v.ref === "cas";
}

/**
 * The object holding the compatible body site of a parsed event (`data` of `file.updated`,
 * `data.recentFileAccess` of `state.snapshot`), or undefined. The `contentRef` there, when
 * cas-shaped, is the only place a compatible diet (ours or the runtime's) holds a pointer.
 */
export function compatibleSiteContainer(event: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(event) || !isPlainObject(event.data)) return undefined;
  for (const site of COMPATIBLE_SITES) {
    if (event.type !== site.type) continue;
    let c: unknown = event.data;
    for (const step of site.container) c = isPlainObject(c) ? c[step] : undefined;
    return isPlainObject(c) ? c : undefined;
  }
  return undefined;
}

/**
 * Refuse a journal that already holds a cas-shaped `contentRef` at a compatible body site
 * (CONTENT_REF_PRESENT): written by someone else, neither we nor the reference runtime could tell
 * it from a pointer of the diet, and a restore would splice a body there that never was.
 * Cheap for other lines (a type sniff, then a byte search).
 */
export function assertNoCasRefAtSite(line: Buffer, lineNo: number): void {
  // The native byte search first: the type sniff walks the whole line outside strings.
  if (line.indexOf(CONTENT_REF_MARKER) < 0 || sniffCompatibleSite(line) === false) return;
  let v: unknown;
  try {
    v = JSON.parse(line.toString("utf8"));
  } catch {
    return;
  }
  const c = compatibleSiteContainer(v);
  if (c === undefined || !isCasShaped(c.contentRef)) return;
  throw new JournalError("CONTENT_REF_PRESENT", `line ${lineNo} already holds a cas-shaped contentRef at a body site (${(v as { type: string }).type})`, {
    line: lineNo,
  }, {
    hint: "the journal was written with a pointer the diet would create; a compatible diet of it could not be restored faithfully by us or the reference runtime. Keep it plain (or fix the writer that put the contentRef there)",
  });
}
