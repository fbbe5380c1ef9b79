/**
 * The single streaming pass of a diet: reads events.jsonl in large chunks (hashing each chunk
 * once), splits lines on raw `\n` bytes, decides each line with the pure `rewriteLine`, and emits
 * line-aligned pointer frames of about FRAME_TARGET_BYTES plus the moved bodies. Shared by the
 * planner (`--dry-run`, no sink writes) and `applyDiet`. Memory: one chunk, one frame, the
 * largest line.
 */
import type { FileHandle } from "node:fs/promises";
import { createSha256 } from "@hankweave-journal/cas";
import type { DietKind } from "./diet-kind.js";
import { CAS_THRESHOLD_BYTES, CONTENT_REF_MARKER, assertNoCasRefAtSite, rewriteLine, type MovedBody } from "./body-sites.js";
import type { FrameIndexEntry } from "./manifest.js";

/** Input bytes per pointer frame (format §5.1: about 1–4 MiB; a longer line makes a frame of its own). */
export const FRAME_TARGET_BYTES = 2 * 1024 * 1024;
/** Bytes per read of the original journal. */
export const DIET_READ_CHUNK_BYTES = 4 * 1024 * 1024;
const NEWLINE = 10;

/** Receives what the scan produces; every callback may be async (back-pressure). */
export interface DietScanSink {
  /** A moved body (called for every occurrence; `firstSeen` false for repeats in this journal). */
  body?(b: MovedBody, line: number, firstSeen: boolean): Promise<void> | void;
  /** Each chunk of the original as read, in order (before its lines are handled; not modified afterwards). */
  original?(chunk: Buffer): Promise<void> | void;
  /** A finished pointer frame (bytes owned by the callee). */
  frame?(pointer: Buffer, entry: FrameIndexEntry): Promise<void> | void;
  /**
   * Instead of `frame`: the finished frame as its pieces, in order (views of the read chunks and
   * of rewritten lines, valid until the returned promise settles: a streaming compressor copies
   * them, so the frame is never concatenated). `entry.pointerBytes` is their total length.
   */
  framePieces?(pieces: Buffer[], entry: FrameIndexEntry): Promise<void> | void;
  /**
   * A read buffer of DIET_READ_CHUNK_BYTES to reuse (one `original` gave out earlier and nothing
   * references any more), or undefined: a new one is allocated.
   */
  reuseChunk?(): Buffer | undefined;
}

/** What one pass learned. */
export interface DietScanResult {
  originalSha256: string;
  originalBytes: number;
  lines: number;
  /** False when the journal ends with an unterminated fragment. */
  endsWithNewline: boolean;
  /**
   * What the reference runtime counts: complete lines that `JSON.parse` accepts (`123`, `null`
   * and `{}` included); null when not counted (the caller trusted a sidecar).
   */
  totalEvents: number | null;
  frames: FrameIndexEntry[];
  pointerBytes: number;
  moved: number;
  uniqueBodies: number;
  movedBytes: number;
  uniqueBodyBytes: number;
}

const MARKER_TAIL = CONTENT_REF_MARKER.subarray(CONTENT_REF_MARKER.length - 4);
const MARKER_HEAD = CONTENT_REF_MARKER.length - MARKER_TAIL.length;

/**
 * `data.indexOf(CONTENT_REF_MARKER, from)`, faster: the marker's last 4 bytes (`Ref"`) are searched
 * and the 8 before them compared. Node searches a needle under 7 bytes by memchr of its first byte
 * and the 12-byte marker by Boyer-Moore-Horspool, whose skips are short on JSON (`"` everywhere):
 * 14 against 50 ms of CPU per 100 MB here, where nearly no line holds the marker.
 */
export function indexOfMarker(data: Buffer, from: number): number {
  for (let i = data.indexOf(MARKER_TAIL, from + MARKER_HEAD); i >= 0; i = data.indexOf(MARKER_TAIL, i + 1)) {
    if (data.compare(CONTENT_REF_MARKER, 0, MARKER_HEAD, i - MARKER_HEAD, i) === 0) return i - MARKER_HEAD;
  }
  return -1;
}

/** True when `JSON.parse` accepts the line (as the reference runtime decodes it: UTF-8, replacement characters for bad bytes). */
function jsonAccepts(line: Buffer): boolean {
  try {
    JSON.parse(line.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

/** What the latest takeShortLines took: its line count and the marker search's position after it. */
const taken = { lines: 0, marker: -1 };

/**
 * Takes the run of complete lines of `data` from `from` that are shorter than CAS_THRESHOLD_BYTES
 * and hold no CONTENT_REF_MARKER (`marker`: the chunk's next marker at or after some earlier
 * start, -1 for none), stopping after the line that brings the run to `budgetBytes`, or before a
 * long line, a marked line or the unterminated rest. Returns where the run ends (`taken` says how
 * many lines). Small and synchronous on purpose: the same loop inside the async scanForDiet was
 * optimised and deoptimised by V8 4 times per 100 MB (35-62 ms of compiler thread each).
 */
function takeShortLines(data: Buffer, from: number, marker: number, budgetBytes: number): number {
  let lines = 0;
  let at = from;
  for (let nl = data.indexOf(NEWLINE, at); nl >= 0; nl = data.indexOf(NEWLINE, at)) {
    if (nl - at >= CAS_THRESHOLD_BYTES) break;
    if (marker >= 0 && marker < at) marker = indexOfMarker(data, at);
    if (marker >= 0 && marker + CONTENT_REF_MARKER.length <= nl) break;
    lines++;
    at = nl + 1;
    if (at - from >= budgetBytes) break;
  }
  taken.lines = lines;
  taken.marker = marker;
  return at;
}

/** Run the pass over `fh` from offset 0 to its end. */
export async function scanForDiet(
  fh: FileHandle,
  opts: { kind: DietKind; countEvents: boolean; frameTargetBytes?: number; frames?: FrameIndexEntry[] },
  sink: DietScanSink = {},
): Promise<DietScanResult> {
  const frameTarget = opts.frameTargetBytes ?? FRAME_TARGET_BYTES;
  const sha = createSha256();
  const seen = new Set<string>();
  // The caller may pass the array to watch the index grow (the diet's in-step verification).
  const frames: FrameIndexEntry[] = opts.frames ?? [];
  const r = { lines: 0, events: 0, pointerBytes: 0, moved: 0, movedBytes: 0, uniqueBodyBytes: 0, originalBytes: 0 };
  let pieces: Buffer[] = [];
  let piecesBytes = 0;
  let cur: FrameIndexEntry = { firstLine: 0, lines: 0, originalOffset: 0, originalBytes: 0, rewritten: [] };

  const pushPiece = (b: Buffer): void => {
    const last = pieces[pieces.length - 1];
    // Contiguous views of the same chunk merge, so a frame of verbatim lines is a few big copies.
    if (last !== undefined && last.buffer === b.buffer && last.byteOffset + last.length === b.byteOffset) {
      pieces[pieces.length - 1] = Buffer.from(last.buffer, last.byteOffset, last.length + b.length);
    } else {
      pieces.push(b);
    }
    piecesBytes += b.length;
  };
  const flushFrame = async (): Promise<void> => {
    if (cur.lines === 0) return;
    const entry = cur;
    const parts = pieces;
    const bytes = piecesBytes;
    pieces = [];
    piecesBytes = 0;
    r.pointerBytes += bytes;
    entry.pointerBytes = bytes;
    frames.push(entry);
    cur = { firstLine: entry.firstLine + entry.lines, lines: 0, originalOffset: entry.originalOffset + entry.originalBytes, originalBytes: 0, rewritten: [] };
    // A streaming compressor takes the pieces as they are: no copy of the frame (~0.08 CPU-s per 100 MB).
    if (sink.framePieces) await sink.framePieces(parts, entry);
    else if (sink.frame) await sink.frame(Buffer.concat(parts, bytes), entry);
  };
  /**
   * `withNl` is the line plus its `\n` when terminated (a view into the chunk when possible);
   * `marker` false when the line provably lacks CONTENT_REF_MARKER (searched once per chunk).
   */
  const handleLine = async (line: Buffer, withNl: Buffer, terminated: boolean, marker = true): Promise<void> => {
    const lineNo = r.lines++;
    if (opts.countEvents && terminated && line.length > 0 && jsonAccepts(line)) r.events++;
    if (marker) assertNoCasRefAtSite(line, lineNo);
    // The unterminated final fragment is never rewritten: the runtime's streaming reader emits it
    // verbatim, so a body moved out of it would come back as pointer text there.
    const rw = terminated && line.length >= CAS_THRESHOLD_BYTES ? rewriteLine(line, opts.kind) : null;
    if (rw) {
      cur.rewritten.push(cur.lines, line.length);
      pushPiece(rw.pointer);
      if (terminated) pushPiece(Buffer.from([NEWLINE]));
      for (const b of rw.bodies) {
        const first = !seen.has(b.sha256);
        if (first) {
          seen.add(b.sha256);
          r.uniqueBodyBytes += b.bytes;
        }
        r.moved++;
        r.movedBytes += b.bytes;
        await sink.body?.(b, lineNo, first);
      }
    } else {
      pushPiece(withNl);
    }
    cur.lines++;
    cur.originalBytes += withNl.length;
    if (piecesBytes >= frameTarget) await flushFrame();
  };

  let position = 0;
  let carry: Buffer[] = [];
  let carryBytes = 0;
  for (;;) {
    // A recycled chunk saves the page faults and the GC of a fresh 4 MiB buffer per read.
    const reused = sink.reuseChunk?.();
    const chunk = reused !== undefined && reused.byteOffset === 0 && reused.buffer.byteLength === DIET_READ_CHUNK_BYTES
      ? Buffer.from(reused.buffer, 0, DIET_READ_CHUNK_BYTES)
      : Buffer.allocUnsafe(DIET_READ_CHUNK_BYTES);
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const data = chunk.subarray(0, bytesRead);
    sha.update(data);
    await sink.original?.(data);
    let from = 0;
    // One native search per chunk instead of one per line (145k calls cost ~0.5 s at 100 MB).
    let marker = indexOfMarker(data, 0);
    for (;;) {
      if (carryBytes === 0 && !opts.countEvents) {
        // What handleLine does for the short lines without the marker (no check, no rewrite, no
        // count), a run of them at a time in a small synchronous loop (see takeShortLines).
        const end = takeShortLines(data, from, marker, frameTarget - piecesBytes);
        marker = taken.marker;
        if (taken.lines > 0) {
          r.lines += taken.lines;
          cur.lines += taken.lines;
          cur.originalBytes += end - from;
          pushPiece(data.subarray(from, end));
          from = end;
          if (piecesBytes >= frameTarget) await flushFrame();
          continue;
        }
      }
      const nl = data.indexOf(NEWLINE, from);
      if (nl < 0) break;
      if (carryBytes > 0) {
        carry.push(data.subarray(from, nl + 1));
        const withNl = Buffer.concat(carry, carryBytes + nl + 1 - from);
        carry = [];
        carryBytes = 0;
        await handleLine(withNl.subarray(0, withNl.length - 1), withNl, true);
      } else {
        if (marker >= 0 && marker < from) marker = indexOfMarker(data, from);
        const hasMarker = marker >= 0 && marker + CONTENT_REF_MARKER.length <= nl;
        await handleLine(data.subarray(from, nl), data.subarray(from, nl + 1), true, hasMarker);
      }
      from = nl + 1;
    }
    if (from < data.length) {
      carry.push(data.subarray(from));
      carryBytes += data.length - from;
    }
  }
  if (carryBytes > 0) {
    const tail = Buffer.concat(carry, carryBytes);
    await handleLine(tail, tail, false);
  }
  await flushFrame();
  r.originalBytes = position;
  return {
    originalSha256: sha.digestHex(),
    originalBytes: r.originalBytes,
    lines: r.lines,
    endsWithNewline: carryBytes === 0,
    totalEvents: opts.countEvents ? r.events : null,
    frames,
    pointerBytes: r.pointerBytes,
    moved: r.moved,
    uniqueBodies: seen.size,
    movedBytes: r.movedBytes,
    uniqueBodyBytes: r.uniqueBodyBytes,
  };
}
