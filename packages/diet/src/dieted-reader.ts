/**
 * The JournalReader over a dieted pair (format §3): the same events, line numbers, original
 * offsets and original bytes as the plain reader. `getLine(N)` decompresses one frame; CAS
 * bodies are read lazily (only for lines a caller asks for) and verified.
 */
import * as fsp from "node:fs/promises";
import {
  JournalError, resolveExec, type ExecLayout, type ExecRef,
  type ChunkOptions, type LineChunk, type JournalInfo, type JournalReader, type JournalRecord, type LineRange, type PageResult, type RawLine,
  type ScanOptions,
} from "@hankweave-journal/core";
import { chunksFromStream, eventsFromRawLines, isBlankLine, parseEventLine, sniffEventType } from "@hankweave-journal/journal";
import { DietedSource } from "./dieted-source.js";
import { readManifest, type DietManifest } from "./manifest.js";
import { listBlobs } from "@hankweave-journal/cas";

class DietedReader implements JournalReader {
  readonly kind = "dieted" as const;

  constructor(private readonly layout: ExecLayout, private readonly src: DietedSource) {}

  get exec(): string {
    return this.layout.exec;
  }

  async *lines(range: LineRange = {}): AsyncGenerator<RawLine> {
    const from = range.fromLine ?? 0;
    const to = range.toLine ?? Number.POSITIVE_INFINITY;
    if (from > to) return;
    for await (const l of this.src.pointerLines(from, to)) {
      yield { line: l.line, offset: l.offset, bytes: await this.src.originalBytes(l), terminated: l.terminated };
    }
  }

  /** The contract's raw chunks, over the rehydrated original bytes (every body read and verified). */
  chunks(opts: ChunkOptions = {}): AsyncGenerator<LineChunk> {
    return chunksFromStream(this.src.originalParts(), opts);
  }

  /** Lines for `events`: rewritten lines of unwanted types are skipped before any CAS read. */
  private async *linesFor(opts: ScanOptions): AsyncGenerator<RawLine> {
    const types = opts.types ? new Set(opts.types) : undefined;
    for await (const l of this.src.pointerLines(opts.fromLine ?? 0, opts.toLine ?? Number.POSITIVE_INFINITY)) {
      if (types && l.rewritten) {
        const t = sniffEventType(l.pointer);
        if (t !== undefined && !types.has(t)) continue;
      }
      yield { line: l.line, offset: l.offset, bytes: await this.src.originalBytes(l), terminated: l.terminated };
    }
  }

  events(opts: ScanOptions = {}): AsyncGenerator<JournalRecord> {
    return eventsFromRawLines(this.linesFor(opts), opts);
  }

  async getLine(line: number): Promise<JournalRecord | null> {
    if (!Number.isSafeInteger(line) || line < 0) throw new RangeError(`line must be a non-negative integer, got ${line}`);
    for await (const raw of this.lines({ fromLine: line, toLine: line })) {
      if (!raw.terminated || raw.bytes.length === 0 || isBlankLine(raw.bytes)) return null;
      const parsed = parseEventLine(raw.bytes, raw.line, raw.offset);
      return parsed.ok ? { line: raw.line, offset: raw.offset, bytes: Buffer.from(raw.bytes), event: parsed.event } : null;
    }
    const path = this.layout.dietedJournal;
    throw new JournalError("LINE_OUT_OF_RANGE", `line ${line} is past the end of ${path}`, { path, line });
  }

  async tail(n: number): Promise<JournalRecord[]> {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
    if (n === 0) return [];
    const frames = this.src.manifest.frames;
    if (!frames) {
      const all: JournalRecord[] = [];
      for await (const r of this.events()) {
        all.push({ line: r.line, offset: r.offset, bytes: Buffer.from(r.bytes), event: r.event });
        if (all.length > n) all.shift();
      }
      return all;
    }
    if (this.src.oneFrame && frames.length > 0) {
      // One frame: every block costs decoding all before it, so read once from the block holding
      // the last n lines (twice as far back when blank or corrupt lines leave fewer than n events).
      let k = frames.length - 1;
      for (let lines = 0; k > 0 && lines + frames[k].lines < n; k--) lines += frames[k].lines;
      for (;;) {
        const ring: JournalRecord[] = [];
        for await (const r of this.events({ fromLine: frames[k].firstLine })) {
          ring.push({ line: r.line, offset: r.offset, bytes: Buffer.from(r.bytes), event: r.event });
          if (ring.length > n) ring.shift();
        }
        if (ring.length >= n || k === 0) return ring;
        k = Math.max(0, k - (frames.length - k));
      }
    }
    // Walk frames from the end, one decompressed at a time, until n events are found.
    const found: JournalRecord[] = [];
    for (let k = frames.length - 1; k >= 0 && found.length < n; k--) {
      const recs: JournalRecord[] = [];
      const last = frames[k].firstLine + frames[k].lines - 1;
      for await (const r of this.events({ fromLine: frames[k].firstLine, toLine: last })) {
        recs.push({ line: r.line, offset: r.offset, bytes: Buffer.from(r.bytes), event: r.event });
      }
      found.unshift(...recs.slice(Math.max(0, recs.length - (n - found.length))));
    }
    return found;
  }

  async page(fromLine: number, limit: number): Promise<PageResult> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const records: JournalRecord[] = [];
    for await (const r of this.events({ fromLine })) {
      if (records.length === limit) return { records, nextLine: r.line };
      records.push({ line: r.line, offset: r.offset, bytes: Buffer.from(r.bytes), event: r.event });
    }
    return { records, nextLine: null };
  }

  async info(): Promise<JournalInfo> {
    const layout = this.src.layout;
    const manifestBytes = (await fsp.stat(layout.manifest)).size;
    // Stored bytes count the directory's whole CAS (one stat per blob, no decompression): the
    // blobs of this journal, plus any left by an earlier diet of the same directory.
    let cas = 0;
    for (const b of await listBlobs(layout)) cas += b.storedBytes;
    return {
      kind: "dieted",
      bytes: this.src.manifest.originalBytes,
      storedBytes: this.src.zstBytes + manifestBytes + cas,
      lines: this.src.lineCount,
      eventSchemaVersion: this.src.manifest.eventSchemaVersion ?? null,
    };
  }

  async close(): Promise<void> {
    await this.src.close();
  }
}

/**
 * Open the dieted pair of `exec` as a JournalReader (no restore needed). Throws MANIFEST_INVALID,
 * ZSTD_CORRUPT, NOT_A_REGULAR_FILE at open; CAS_MISSING / CAS_CORRUPT / CAS_BAD_REF when a line
 * that needs a body is read. `read`: `layout.manifest` already read and checked (openReader's), not
 * read again.
 *
 * @example const r = await openDietedReader("/runs/x"); await r.getLine(1200);
 */
export async function openDietedReader(exec: ExecRef, read?: DietManifest): Promise<JournalReader> {
  const layout = resolveExec(exec);
  const manifest = read ?? (await readManifest(layout));
  return new DietedReader(layout, await DietedSource.open(layout, manifest));
}
