/**
 * The JournalReader over an extended diet (format §3): the same lines, offsets, bytes, events and
 * findings as the plain reader, without restoring. `getLine(N)` reads the tables, one block record
 * and the pack frames the line needs, and rebuilds only that line (earlier lines of the block only
 * advance the stream cursors).
 */
import * as fsp from "node:fs/promises";
import {
  JournalError, resolveExec, type ExecLayout, type ExecRef,
  type ChunkOptions, type JournalInfo, type JournalReader, type JournalRecord, type LineChunk, type LineRange, type PageResult, type RawLine,
  type ScanOptions,
} from "@hankweave-journal/core";
import { chunksFromLines, eventsFromRawLines, isBlankLine, parseEventLine } from "@hankweave-journal/journal";
import type { DietManifest } from "../manifest.js";
import type { ExtSource } from "./ext-source.js";
import { openExtSource } from "./ext-diet.js";

class ExtReader implements JournalReader {
  readonly kind = "dieted" as const;

  constructor(private readonly layout: ExecLayout, private readonly src: ExtSource, private readonly manifest: DietManifest) {}

  get exec(): string {
    return this.layout.exec;
  }

  async *lines(range: LineRange = {}): AsyncGenerator<RawLine> {
    const from = Math.max(0, range.fromLine ?? 0);
    const to = Math.min(range.toLine ?? Number.POSITIVE_INFINITY, this.src.lineCount - 1);
    if (from > to) return;
    for (let k = this.src.blockOf(from); k >= 0 && k < this.src.blocks.length; k++) {
      const b = this.src.blocks[k];
      if (b.firstLine > to) break;
      if (from <= b.firstLine && to >= b.firstLine + b.lines - 1) {
        // The whole block: rebuilt straight into bytes, lines are views of it.
        const { data, ends } = this.src.decodeBytes(k);
        let start = 0;
        for (let i = 0; i < b.lines; i++) {
          const line = b.firstLine + i;
          yield { line, offset: b.originalOffset + start, bytes: data.subarray(start, ends[i]), terminated: this.src.terminated(line) };
          start = ends[i] + 1;
        }
        continue;
      }
      const d = this.src.decode(k, Math.max(0, from - b.firstLine), to - b.firstLine);
      for (let i = 0; i < d.starts.length; i++) {
        const line = d.firstLine + i;
        yield { line, offset: d.offsets[i], bytes: d.data.subarray(d.starts[i], d.ends[i]), terminated: this.src.terminated(line) };
      }
    }
  }

  /** The contract's raw chunks, built from the rebuilt lines. */
  chunks(opts: ChunkOptions = {}): AsyncGenerator<LineChunk> {
    return chunksFromLines((range) => this.lines(range), opts);
  }

  events(opts: ScanOptions = {}): AsyncGenerator<JournalRecord> {
    return eventsFromRawLines(this.lines(opts), opts);
  }

  async getLine(line: number): Promise<JournalRecord | null> {
    if (!Number.isSafeInteger(line) || line < 0) throw new RangeError(`line must be a non-negative integer, got ${line}`);
    // The line's block decoded straight (no generator: a fresh process compiles less before its first line).
    const k = this.src.blockOf(line);
    if (k < 0) {
      const path = this.layout.dietedJournal;
      throw new JournalError("LINE_OUT_OF_RANGE", `line ${line} is past the end of ${path}`, { path, line });
    }
    const i = line - this.src.blocks[k].firstLine;
    const d = this.src.decode(k, i, i);
    const bytes = d.data.subarray(d.starts[0], d.ends[0]);
    if (!this.src.terminated(line) || bytes.length === 0 || isBlankLine(bytes)) return null;
    const parsed = parseEventLine(bytes, line, d.offsets[0]);
    return parsed.ok ? { line, offset: d.offsets[0], bytes: Buffer.from(bytes), event: parsed.event } : null;
  }

  async tail(n: number): Promise<JournalRecord[]> {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
    const found: JournalRecord[] = [];
    for (let k = this.src.blocks.length - 1; k >= 0 && found.length < n; k--) {
      const b = this.src.blocks[k];
      const recs: JournalRecord[] = [];
      for await (const r of this.events({ fromLine: b.firstLine, toLine: b.firstLine + b.lines - 1 })) {
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
    const manifestBytes = (await fsp.stat(this.layout.manifest)).size;
    return {
      kind: "dieted",
      bytes: this.manifest.originalBytes,
      storedBytes: this.src.fileBytes + manifestBytes,
      // Physical newline-terminated lines (a torn final fragment is not one).
      lines: this.src.lineCount - (this.src.lineCount > 0 && !this.src.terminated(this.src.lineCount - 1) ? 1 : 0),
      eventSchemaVersion: this.manifest.eventSchemaVersion ?? null,
    };
  }

  async close(): Promise<void> {
    this.src.close();
  }
}

/**
 * Open the extended diet of `exec` as a JournalReader. Throws MANIFEST_INVALID, EXT_TRUNCATED,
 * EXT_INDEX_INVALID at open; EXT_CORRUPT / EXT_BODY_SIZE when a line that needs a damaged block or
 * pack frame is read. `manifestJson`: the manifest as `readManifestJson` returned it, when the
 * caller has read it already (it is then not read again).
 *
 * @example const r = await openExtReader("/runs/x"); await r.getLine(1200);
 */
export async function openExtReader(exec: ExecRef, manifestJson?: unknown): Promise<JournalReader> {
  const layout = resolveExec(exec);
  const { src, manifest } = await openExtSource(layout, {}, manifestJson);
  return new ExtReader(layout, src, manifest);
}
