/**
 * What a journal is made of, measured the same way for a conformance journal and for a generated
 * one (issue 18 item 1): the type mix by count and by bytes, the size distribution of its bodies
 * (string fields of at least BODY_MIN_CHARS, per type and field path), how often bodies repeat,
 * the event schema (inline `file.updated` bodies or sha256/bytes/source), and the zstd ratio of
 * the whole file when the caller measured it. Pure over the bytes it is given (no I/O).
 */

/** A string field this long or longer counts as a body (tool results, prose, file contents). */
export const BODY_MIN_CHARS = 128;

/** Count and byte share of one event type. */
export interface TypeShare {
  count: number;
  bytes: number;
}

/** Size distribution of one body field (`tool.result .result`), in UTF-8 bytes. */
export interface FieldSizes {
  count: number;
  bytes: number;
  p50: number;
  p90: number;
  max: number;
}

export interface JournalProfile {
  /** Bytes profiled (the whole journal, or the sampled part of it). */
  bytes: number;
  lines: number;
  bytesPerLine: number;
  /** Per event type. */
  types: Record<string, TypeShare>;
  /** Per `type field.path` (array indexes as `[]`), bodies only. */
  fields: Record<string, FieldSizes>;
  /** All bodies: count, bytes, size quantiles (bytes) and byte-identical repeats of an earlier body. */
  bodies: { count: number; bytes: number; p50: number; p90: number; max: number; repeatCount: number; repeatBytes: number };
  /** `file.updated` lines that carry an inline `content` (v1) and that carry a `sha256` (v2). */
  fileUpdated: { inline: number; hashed: number };
  /** True when `bytes` is a sample of a larger journal (lines spread across it). */
  sampled: boolean;
}

const quantile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/**
 * Profile the complete lines of `buf` (a journal or a concatenation of whole-line windows of
 * one). Lines that do not parse are counted under the type `(unparsable)`.
 *
 * @example profileJournal(readFileSync(journal)).types["tool.result"].bytes
 */
export function profileJournal(buf: Buffer, opts: { sampled?: boolean } = {}): JournalProfile {
  const types: Record<string, TypeShare> = {};
  const sizes = new Map<string, number[]>();
  const seen = new Set<string>();
  const bodies = { count: 0, bytes: 0, p50: 0, p90: 0, max: 0, repeatCount: 0, repeatBytes: 0 };
  const allSizes: number[] = [];
  const fileUpdated = { inline: 0, hashed: 0 };
  let lines = 0;
  let bytes = 0;
  const walk = (type: string, path: string, v: unknown): void => {
    if (typeof v === "string") {
      if (v.length < BODY_MIN_CHARS) return;
      const n = Buffer.byteLength(v);
      const key = `${type} ${path}`;
      let a = sizes.get(key);
      if (!a) sizes.set(key, (a = []));
      a.push(n);
      allSizes.push(n);
      bodies.count += 1;
      bodies.bytes += n;
      if (seen.has(v)) {
        bodies.repeatCount += 1;
        bodies.repeatBytes += n;
      } else seen.add(v);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(type, `${path}[]`, x);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(type, `${path}.${k}`, x);
    }
  };
  let from = 0;
  for (;;) {
    const nl = buf.indexOf(10, from);
    if (nl < 0) break;
    const len = nl + 1 - from;
    if (nl > from) {
      lines += 1;
      bytes += len;
      let type = "(unparsable)";
      let data: unknown;
      try {
        const e = JSON.parse(buf.toString("utf8", from, nl)) as { type?: unknown; data?: unknown };
        if (typeof e.type === "string") type = e.type;
        data = e.data;
      } catch {
        /* counted as unparsable */
      }
      const t = (types[type] ??= { count: 0, bytes: 0 });
      t.count += 1;
      t.bytes += len;
      if (data !== undefined) walk(type, "", data);
      if (type === "file.updated" && data && typeof data === "object") {
        const d = data as Record<string, unknown>;
        if (typeof d.content === "string") fileUpdated.inline += 1;
        if (typeof d.sha256 === "string") fileUpdated.hashed += 1;
      }
    }
    from = nl + 1;
  }
  const fields: Record<string, FieldSizes> = {};
  for (const [k, a] of sizes) {
    a.sort((x, y) => x - y);
    fields[k] = { count: a.length, bytes: a.reduce((s, x) => s + x, 0), p50: quantile(a, 0.5), p90: quantile(a, 0.9), max: a[a.length - 1] };
  }
  allSizes.sort((x, y) => x - y);
  bodies.p50 = quantile(allSizes, 0.5);
  bodies.p90 = quantile(allSizes, 0.9);
  bodies.max = allSizes[allSizes.length - 1] ?? 0;
  return { bytes, lines, bytesPerLine: lines > 0 ? bytes / lines : 0, types, fields, bodies, fileUpdated, sampled: opts.sampled === true };
}

/** The types the issue names, in its order (the comparison table's columns). */
export const COMPARED_TYPES = ["state.transition", "tool.result", "assistant.action", "token.usage", "state.snapshot", "file.updated"] as const;

/** Share (0–1) of `type` in a profile, by count or by bytes. */
export function shareOf(p: JournalProfile, type: string, by: "count" | "bytes"): number {
  const t = p.types[type];
  if (!t) return 0;
  return by === "count" ? t.count / Math.max(1, p.lines) : t.bytes / Math.max(1, p.bytes);
}

/** One row of the profile comparison: a journal's measures, with its whole-file zstd ratios when known. */
export interface ProfileSummary {
  name: string;
  profile: JournalProfile;
  /** Input bytes ÷ `zstd -3` bytes (whole file), null when not measured. */
  zstd3Ratio: number | null;
  zstd19Ratio: number | null;
  /** Sidecar `eventSchemaVersion` (null when absent). */
  eventSchemaVersion: number | null;
}

const pct = (x: number): string => `${(100 * x).toFixed(x < 0.01 && x > 0 ? 2 : 1)}%`;
const ratio = (x: number | null): string => (x === null ? "n/a" : `${x.toFixed(2)}:1`);

/** The comparison table's header and cells (text and Markdown renderings share them). */
export function profileTable(rows: ProfileSummary[]): string[][] {
  const head = ["journal", "schema", "B/line", ...COMPARED_TYPES.map((t) => `${t} count/bytes`), "body p50/p90", "body repeats", "zstd -3", "zstd -19"];
  const out = [head];
  for (const r of rows) {
    const p = r.profile;
    out.push([
      r.name,
      `${r.eventSchemaVersion === null ? "no sidecar" : `v${r.eventSchemaVersion}`}${p.fileUpdated.inline > 0 ? ", inline bodies" : ""}`,
      p.bytesPerLine.toFixed(0),
      ...COMPARED_TYPES.map((t) => `${pct(shareOf(p, t, "count"))} / ${pct(shareOf(p, t, "bytes"))}`),
      `${p.bodies.p50} / ${p.bodies.p90} B`,
      `${pct(p.bodies.repeatCount / Math.max(1, p.bodies.count))} (${pct(p.bodies.repeatBytes / Math.max(1, p.bodies.bytes))} B)`,
      ratio(r.zstd3Ratio),
      ratio(r.zstd19Ratio),
    ]);
  }
  return out;
}
