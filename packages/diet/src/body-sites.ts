/**
 * Which bodies a diet moves (SPEC §5.1–5.2) and the invertibility proof. Pure: no I/O.
 *
 * A line is rewritten only when it is canonical (`JSON.stringify(JSON.parse(line)) === line`,
 * which rules out duplicate keys, unusual escapes such as `\u00e9` or `\/`, and whitespace),
 * the line and each moved body are ≥ 4,096 bytes, the body is a well-formed string, and the
 * rewritten line rehydrates to the identical string. Anything else stays verbatim.
 */
import { isUtf8 } from "node:buffer";
import { createHash } from "node:crypto";
import { sniffEventType } from "@hankweave-journal/journal";
import { findPointers, spliceBodies } from "./rehydrate.js";

/** Lines and bodies below this many bytes stay inline (SPEC §5.1). */
export const CAS_THRESHOLD_BYTES = 4096;

/** `compatible` = dietVersion 1 (two sites); `extended` = dietVersion 2 (more sites, opt-in). */
export type DietMode = "compatible" | "extended";

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

/** The body sites of a mode. */
export function sitesOf(mode: DietMode): readonly BodySite[] {
  return mode === "extended" ? EXTENDED_SITES : COMPATIBLE_SITES;
}

const SITE_TYPES = {
  compatible: new Set(COMPATIBLE_SITES.map((s) => s.type)),
  extended: new Set(EXTENDED_SITES.map((s) => s.type)),
};

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
export function rewriteLine(bytes: Buffer, mode: DietMode): LineRewrite | null {
  if (bytes.length < CAS_THRESHOLD_BYTES) return null;
  const type = sniffEventType(bytes);
  if (type === undefined || !SITE_TYPES[mode].has(type)) return null;
  if (!isUtf8(bytes)) return null;
  const text = bytes.toString("utf8");
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(root) || !isPlainObject(root.data)) return null;
  if (JSON.stringify(root) !== text) return null;
  let obj: Record<string, unknown> = root;
  const moved: MovedBody[] = [];
  for (const site of sitesOf(mode)) {
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
  const pointerText = JSON.stringify(obj);
  // The proof: the pointer line holds exactly our pointers and rehydrates to the identical string.
  const pointers = findPointers(pointerText);
  if (pointers.length !== moved.length) return null;
  const bodies = new Map(moved.map((m) => [m.sha256, m.body.toString("utf8")]));
  let back: string;
  try {
    back = spliceBodies(pointerText, pointers, (sha) => bodies.get(sha));
  } catch {
    return null;
  }
  if (back !== text) return null;
  return { pointer: Buffer.from(pointerText, "utf8"), bodies: moved };
}
