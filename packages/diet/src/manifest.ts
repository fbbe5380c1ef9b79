/**
 * `journal.meta.json`, the diet manifest (format §5.1): compact JSON with format §5.1's keys in order
 * (`schemaVersion, dietVersion, eventSchemaVersion, totalEvents, originalSha256, originalBytes,
 * segments, dietedAt`), then our extra keys, which readers of the reference runtime ignore:
 * `lines`, `frames` (line → frame map with original byte offsets and the rewritten lines' original
 * lengths, flat `[index, bytes, …]`) and `bodies` (counts).
 */
import { lstatSync, readFileSync } from "node:fs";
import { JournalError, isSha256Hex, type ExecLayout } from "@hankweave-journal/core";

/** One frame of our seekable pointer journal, as the manifest indexes it. */
export interface FrameIndexEntry {
  /** Line number of the frame's first line. */
  firstLine: number;
  /** Physical lines in the frame (the final unterminated fragment counts). */
  lines: number;
  /** Byte offset of the frame's first line in the original events.jsonl. */
  originalOffset: number;
  /** Original bytes covered by the frame (newlines included). */
  originalBytes: number;
  /**
   * Pointer bytes of the frame (decompressed; newlines included). In a one-frame pointer journal
   * the frames are blocks of the one zstd frame, cut by these sizes; written since the one-frame
   * diet (2026-12-01), absent in older seekable manifests (their seek table has the sizes).
   */
  pointerBytes?: number;
  /**
   * Rewritten lines, flat: `[index in frame, original line bytes without the \n, …]` (two
   * numbers per line, indexes strictly increasing; see frameEntry for why flat).
   */
  rewritten: number[];
}

/**
 * How our pointer journal is framed: `one-frame` (the default since 2026-12-01, format §5.1: one zstd
 * frame; `frames` are blocks of it) or `seekable` (independent frames and a seek table, `--seekable`;
 * also every manifest of ours without the key, written before).
 */
export type PointerFraming = "one-frame" | "seekable";

/** The manifest as we read and write it. */
export interface DietManifest {
  schemaVersion: 1;
  dietVersion: 1 | 2;
  /** Copied from the sidecar when it had one; absent otherwise (format §5.1). */
  eventSchemaVersion?: number;
  totalEvents: number;
  originalSha256: string;
  originalBytes: number;
  segments: { id: number; events: number }[];
  dietedAt: string;
  /** Extra (ours): physical line count. Absent in manifests of the reference runtime. */
  lines?: number;
  /** Extra (ours): false when the journal ends with an unterminated fragment. */
  endsWithNewline?: boolean;
  /** Extra (ours): the frame index. Absent in manifests of the reference runtime. */
  frames?: FrameIndexEntry[];
  /** Extra (ours): how the pointer journal is framed (with `frames`; absent means seekable). */
  framing?: PointerFraming;
  /** Extra (ours): what moved to the CAS. */
  bodies?: { moved: number; unique: number; movedBytes: number };
}

/** Serialize with format §5.1's key order, extras after. */
export function serializeManifest(m: DietManifest): string {
  const o: Record<string, unknown> = {
    schemaVersion: m.schemaVersion,
    dietVersion: m.dietVersion,
  };
  if (m.eventSchemaVersion !== undefined) o.eventSchemaVersion = m.eventSchemaVersion;
  Object.assign(o, {
    totalEvents: m.totalEvents,
    originalSha256: m.originalSha256,
    originalBytes: m.originalBytes,
    segments: m.segments.map((s) => ({ id: s.id, events: s.events })),
    dietedAt: m.dietedAt,
  });
  if (m.lines !== undefined) o.lines = m.lines;
  if (m.endsWithNewline !== undefined) o.endsWithNewline = m.endsWithNewline;
  if (m.bodies !== undefined) o.bodies = m.bodies;
  if (m.framing !== undefined) o.framing = m.framing;
  if (m.frames !== undefined) {
    o.frames = m.frames.map((f) => {
      const e: Record<string, unknown> = { firstLine: f.firstLine, lines: f.lines, originalOffset: f.originalOffset, originalBytes: f.originalBytes };
      if (f.pointerBytes !== undefined) e.pointerBytes = f.pointerBytes;
      e.rewritten = f.rewritten;
      return e;
    });
  }
  return JSON.stringify(o);
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/**
 * One frame index entry starting at `line`/`offset`, with its counts checked, or null when
 * inconsistent. Its `rewritten` list is only checked for shape here (an array; pairs from older
 * manifests flattened); its values are checked by `checkRewritten` before the frame is used.
 *
 * `rewritten` is flat (`[i0, bytes0, i1, bytes1, …]`), on disk and in memory: V8's JSON.parse
 * builds thousands of two-element arrays slowly (12 ms for the 15,248 pairs of a 1 GB journal's
 * manifest, against 1.5 ms flat), and so does a cold loop building them (15–24 ms); the manifest
 * is parsed on every open, one-line reads included. Manifests written with pairs (before the flat
 * form) are still read, flattened here.
 */
function frameEntry(f: FrameIndexEntry, line: number, offset: number): FrameIndexEntry | null {
  if (typeof f !== "object" || f === null || f.firstLine !== line || f.originalOffset !== offset) return null;
  if (!isCount(f.lines) || f.lines <= 0 || !isCount(f.originalBytes) || !Array.isArray(f.rewritten)) return null;
  let flat = f.rewritten as unknown[];
  if (flat.length > 0 && typeof flat[0] !== "number") {
    const pairs = flat;
    flat = new Array(pairs.length * 2);
    for (let i = 0; i < pairs.length; i++) {
      const r = pairs[i];
      if (!Array.isArray(r) || r.length !== 2) return null;
      flat[2 * i] = r[0];
      flat[2 * i + 1] = r[1];
    }
  }
  if (f.pointerBytes !== undefined && !isCount(f.pointerBytes)) return null;
  const e: FrameIndexEntry = { firstLine: f.firstLine, lines: f.lines, originalOffset: f.originalOffset, originalBytes: f.originalBytes, rewritten: flat as number[] };
  if (f.pointerBytes !== undefined) e.pointerBytes = f.pointerBytes;
  return e;
}

/**
 * Check frame `k`'s rewritten list: pairs of numbers, indexes strictly increasing and inside the
 * frame, lengths counts. Throws MANIFEST_INVALID. Readers call it for the frames they use (a
 * one-line read checks one frame: checking the 15k entries of a 1 GB manifest at open took
 * ~7 ms of a cold process, a third of a one-line read), restore for all before it starts.
 */
export function checkRewritten(f: FrameIndexEntry, k: number, path?: string): void {
  const flat = f.rewritten as unknown[];
  let ok = flat.length % 2 === 0;
  let prev = -1;
  for (let i = 0; ok && i < flat.length; i += 2) {
    const at = flat[i];
    const bytes = flat[i + 1];
    ok = typeof at === "number" && Number.isSafeInteger(at) && at > prev && at < f.lines
      && typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= 0;
    prev = at as number;
  }
  if (!ok) throw invalid(path, `the rewritten lines of frame ${k} (line ${f.firstLine}) are inconsistent`);
}

function invalid(path: string | undefined, why: string): JournalError {
  return new JournalError("MANIFEST_INVALID", `journal.meta.json is invalid: ${why}`, { path }, {
    hint: "the dieted journal cannot be trusted without its manifest; restore it from a backup",
  });
}

/** Parse and validate manifest text; throws MANIFEST_INVALID. */
export function parseManifest(text: string, path?: string): DietManifest {
  return manifestOf(manifestJsonOf(text, path), path);
}

function manifestJsonOf(text: string, path: string | undefined): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw invalid(path, `not JSON (${(e as Error).message})`);
  }
}

/**
 * Validate a manifest already parsed from JSON (by `readManifestJson`: an open that also reads
 * other keys of it, the extended diet's `ext`, parses the file once); throws MANIFEST_INVALID.
 */
export function manifestOf(v: unknown, path?: string): DietManifest {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw invalid(path, "not an object");
  const o = v as Record<string, unknown>;
  if (o.schemaVersion !== 1) throw invalid(path, `unsupported schemaVersion ${JSON.stringify(o.schemaVersion)}`);
  if (o.dietVersion !== 1 && o.dietVersion !== 2) throw invalid(path, `unsupported dietVersion ${JSON.stringify(o.dietVersion)}`);
  if (!isCount(o.totalEvents)) throw invalid(path, "totalEvents is not a count");
  if (!isSha256Hex(o.originalSha256)) throw invalid(path, "originalSha256 is not a sha256");
  if (!isCount(o.originalBytes)) throw invalid(path, "originalBytes is not a count");
  const m: DietManifest = {
    schemaVersion: 1,
    dietVersion: o.dietVersion,
    totalEvents: o.totalEvents,
    originalSha256: o.originalSha256,
    originalBytes: o.originalBytes,
    segments: Array.isArray(o.segments) ? (o.segments as DietManifest["segments"]) : [{ id: 0, events: o.totalEvents }],
    dietedAt: typeof o.dietedAt === "string" ? o.dietedAt : "",
  };
  // Informational: a value that is not a count is ignored, not a reason to refuse the diet.
  if (isCount(o.eventSchemaVersion)) m.eventSchemaVersion = o.eventSchemaVersion;
  // Its own function: an extended diet's manifest has no frame index, and a fresh process compiles only what it calls.
  if (o.frames !== undefined) frameIndexOf(o, m, path);
  if (typeof o.bodies === "object" && o.bodies !== null) m.bodies = o.bodies as DietManifest["bodies"];
  return m;
}

/** The frame index of a dietVersion-1 manifest (its `frames`, `lines`, `framing`) into `m`; MANIFEST_INVALID. */
function frameIndexOf(o: Record<string, unknown>, m: DietManifest, path: string | undefined): void {
  if (!Array.isArray(o.frames) || !isCount(o.lines)) throw invalid(path, "frames/lines malformed");
  if (o.framing !== undefined && o.framing !== "one-frame" && o.framing !== "seekable") throw invalid(path, `unknown framing ${JSON.stringify(o.framing)}`);
  // Plain loops, no closures: this runs once per open over every rewritten line (15k entries
  // at 1 GB), mostly before the JIT has warmed up, so it is on the path of a one-line read.
  const raw = o.frames as FrameIndexEntry[];
  const frames: FrameIndexEntry[] = new Array(raw.length);
  let line = 0;
  let offset = 0;
  for (let k = 0; k < raw.length; k++) {
    const f = frameEntry(raw[k], line, offset);
    if (f === null) throw invalid(path, `frame index entry at line ${line} is inconsistent`);
    frames[k] = f;
    line += f.lines;
    offset += f.originalBytes;
  }
  if (line !== o.lines || offset !== o.originalBytes) throw invalid(path, "frames do not add up to lines/originalBytes");
  m.lines = o.lines;
  m.endsWithNewline = o.endsWithNewline !== false;
  m.frames = frames;
  m.framing = o.framing === "one-frame" ? "one-frame" : "seekable";
  if (m.framing === "one-frame" && frames.some((f) => f.pointerBytes === undefined)) throw invalid(path, "a one-frame index needs every frame's pointerBytes");
}

/** Read `layout.manifest` (or another path): MANIFEST_INVALID when absent or malformed, NOT_A_REGULAR_FILE. */
export async function readManifest(layout: ExecLayout, path: string = layout.manifest): Promise<DietManifest> {
  return manifestOf(readManifestJson(path), path);
}

/**
 * The manifest at `path` as parsed JSON, not yet validated (give it to `manifestOf`): the same
 * checks and errors as `readManifest` up to the JSON (NOT_A_REGULAR_FILE, MANIFEST_INVALID when
 * absent or not JSON, IO_ERROR). Synchronous: one lstat and one read.
 */
export function readManifestJson(path: string): unknown {
  let text: string;
  try {
    // Synchronous: a small file read once per open; two threadpool round trips cost more.
    const st = lstatSync(path);
    if (!st.isFile()) throw new JournalError("NOT_A_REGULAR_FILE", `${path} is not a regular file`, { path });
    text = readFileSync(path, "utf8");
  } catch (e) {
    if (e instanceof JournalError) throw e;
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw invalid(path, "missing");
    throw new JournalError("IO_ERROR", `cannot read ${path}: ${(e as Error).message}`, { path }, { cause: e });
  }
  return manifestJsonOf(text, path);
}
