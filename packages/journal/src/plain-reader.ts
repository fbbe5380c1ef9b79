/**
 * The streaming reader of a plain `events.jsonl` (format §3), implementing the shared JournalReader
 * contract (its bulk fast path `chunks()` included). Random access (getLine, page, tail) is exact and uses a sparse in-memory index of
 * line → offset anchors learned while scanning; no sidecar is trusted for positions.
 */
import type { FileHandle } from "node:fs/promises";
import { JournalError, layoutOf, type ChunkOptions, type Finding, type JournalInfo, type JournalReader, type JournalRecord, type LineChunk, type LineRange, type PageResult, type RawLine, type ScanOptions, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { journalPresence, missingJournalError, openRegularForRead } from "./fs-checks.js";
import { isBlankLine, parseEventLine, typeSnifferAt } from "./line-parse.js";
import {
  READ_CHUNK_BYTES, chunkLines, fileByteRead, scanLineChunks, scanRawLineBatches, seekLineStart, visitLineChunks, type LineVisitor,
  type ScanStart,
} from "./line-scanner.js";
import { readSidecarStatus } from "./sidecar.js";

/** A scan records an anchor (line → offset) every this many lines, for getLine/page/tail. */
export const ANCHOR_EVERY_LINES = 4096;

/** The torn-tail finding for an unterminated final fragment. */
export function tornTailFinding(raw: RawLine): Finding {
  return {
    code: "TORN_TAIL",
    severity: "warning",
    message: `unterminated final fragment of ${raw.bytes.length} bytes at byte ${raw.offset} (line ${raw.line})`,
    line: raw.line,
    byteOffset: raw.offset,
    details: { length: raw.bytes.length },
  };
}

/** A `types` filter: the set, and a byte-level sniffer over it. */
export interface TypeFilter {
  has(type: string): boolean;
  sniff(bytes: Uint8Array): boolean | undefined;
  /** `sniff` of the line `bytes[start, end)` of a larger buffer. */
  sniffAt(bytes: Uint8Array, start: number, end: number): boolean | undefined;
}

/** Build the filter for `ScanOptions.types` (undefined when there is none). */
export function typeFilter(types: readonly string[] | undefined): TypeFilter | undefined {
  if (!types) return undefined;
  const set = new Set(types);
  const sniffAt = typeSnifferAt(set);
  return { has: (t) => set.has(t), sniff: (bytes) => sniffAt(bytes, 0, bytes.length), sniffAt };
}

/**
 * Classify one raw line: the record to yield, or undefined for a blank line, a line of another
 * (sniffed) type, a corrupt line or the torn tail (the last two reported through `onFinding`).
 * Synchronous, so batch loops pay no per-line await.
 */
export function recordOfLine(raw: RawLine, types: TypeFilter | undefined, onFinding: ((f: Finding) => void) | undefined): JournalRecord | undefined {
  if (!raw.terminated) {
    onFinding?.(tornTailFinding(raw));
    return undefined;
  }
  if (raw.bytes.length === 0 || isBlankLine(raw.bytes)) return undefined;
  if (types && types.sniff(raw.bytes) === false) return undefined;
  return parsedRecord(raw, types, onFinding);
}

/** The parse step of recordOfLine, for a terminated, non-blank line whose sniff did not exclude it. */
function parsedRecord(raw: RawLine, types: TypeFilter | undefined, onFinding: ((f: Finding) => void) | undefined): JournalRecord | undefined {
  const parsed = parseEventLine(raw.bytes, raw.line, raw.offset);
  if (!parsed.ok) {
    onFinding?.(parsed.finding);
    return undefined;
  }
  if (types && !types.has(parsed.event.type)) return undefined;
  return { line: raw.line, offset: raw.offset, bytes: raw.bytes, event: parsed.event };
}

/**
 * Filter raw lines into parsed events: skips blank lines, reports corrupt lines and a torn tail
 * through `onFinding`, and skips lines whose sniffed type is not in `types` without parsing them.
 * Shared with readers that produce raw lines differently (the dieted journal).
 */
export async function* eventsFromRawLines(lines: AsyncIterable<RawLine>, opts: ScanOptions = {}): AsyncGenerator<JournalRecord> {
  const types = typeFilter(opts.types);
  for await (const raw of lines) {
    const rec = recordOfLine(raw, types, opts.onFinding);
    if (rec) yield rec;
  }
}

function ownRecord(r: JournalRecord): JournalRecord {
  return { line: r.line, offset: r.offset, bytes: Buffer.from(r.bytes), event: r.event };
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * An async iterator over the elements of batches: one resolved promise per element, one await of
 * the source per batch (an async generator costs a resume plus promise hops per element).
 */
/** A finding travelling in a batch at its line's position, so findings and records keep file order. */
class FindingItem {
  constructor(readonly finding: Finding) {}
}

class BatchedIterator<T> implements AsyncIterableIterator<T> {
  private batch: (T | FindingItem)[] = [];
  private i = 0;
  private finished = false;
  private refilling: Promise<IteratorResult<T>> | null = null;

  constructor(
    private readonly source: AsyncGenerator<(T | FindingItem)[]>,
    private readonly onFinding: ((f: Finding) => void) | undefined,
  ) {}

  /** The next record of the current batch, delivering the findings before it; undefined at its end. */
  private take(): T | undefined {
    while (this.i < this.batch.length) {
      const item = this.batch[this.i++]!;
      if (item instanceof FindingItem) this.onFinding?.(item.finding);
      else return item;
    }
    return undefined;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.refilling !== null) return this.refilling.then(() => this.next());
    const value = this.take();
    if (value !== undefined) return Promise.resolve({ value, done: false });
    if (this.finished) return Promise.resolve(DONE);
    const p = this.refill().finally(() => {
      if (this.refilling === p) this.refilling = null;
    });
    this.refilling = p;
    return p;
  }

  private async refill(): Promise<IteratorResult<T>> {
    for (;;) {
      const r = await this.source.next();
      if (r.done) {
        this.finished = true;
        this.batch = [];
        this.i = 0;
        return DONE;
      }
      this.batch = r.value;
      this.i = 0;
      const value = this.take();
      if (value !== undefined) return { value, done: false };
    }
  }

  async return(): Promise<IteratorResult<T>> {
    this.finished = true;
    this.batch = [];
    this.i = 0;
    await this.source.return(undefined);
    return DONE;
  }

  async throw(e?: unknown): Promise<IteratorResult<T>> {
    this.finished = true;
    this.batch = [];
    await this.source.return(undefined);
    throw e;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }
}

class PlainReader implements JournalReader {
  readonly kind = "plain" as const;
  /** line → offset of known line starts; line 0 is always at offset 0. */
  private anchors = new Map<number, number>([[0, 0]]);
  private maxAnchorOffset = 0;

  readonly exec: string;

  constructor(private readonly layout: ExecLayout, private readonly fh: FileHandle) {
    this.exec = layout.exec;
  }

  private async size(): Promise<number> {
    return (await this.fh.stat()).size;
  }

  /** Drop anchors that a truncation (repair) made meaningless. */
  private async validateAnchors(): Promise<void> {
    if (this.maxAnchorOffset > (await this.size())) {
      this.anchors = new Map([[0, 0]]);
      this.maxAnchorOffset = 0;
    }
  }

  private addAnchor(line: number, offset: number): void {
    if (!this.anchors.has(line)) {
      this.anchors.set(line, offset);
      if (offset > this.maxAnchorOffset) this.maxAnchorOffset = offset;
    }
  }

  private bestAnchor(line: number): { line: number; offset: number } {
    let best = { line: 0, offset: 0 };
    for (const [l, o] of this.anchors) if (l <= line && l > best.line) best = { line: l, offset: o };
    return best;
  }

  /**
   * Where a scan of lines from `from` on starts: the best anchor before it, moved up to line
   * `from` itself by counting newlines (seekLineStart) when that is at least an anchor interval
   * ahead, learning the anchors on the way. The line-by-line loops cost a visitor call per line
   * they pass: reading the middle line of a 1 GB journal took ~300 ms that way, ~2× awk.
   */
  private async startFor(from: number): Promise<ScanStart> {
    await this.validateAnchors();
    const anchor = this.bestAnchor(from);
    if (from - anchor.line < ANCHOR_EVERY_LINES) return anchor;
    return seekLineStart(this.fh, anchor, from, (l, o) => this.addAnchor(l, o), ANCHOR_EVERY_LINES);
  }

  /** Batches of lines within the range (views valid until the next batch), learning anchors on the way. */
  private async *lineBatches(range: LineRange): AsyncGenerator<RawLine[]> {
    const from = range.fromLine ?? 0;
    const to = range.toLine ?? Number.POSITIVE_INFINITY;
    if (from > to) return;
    const start = await this.startFor(from);
    for await (const batch of scanRawLineBatches(this.fh, start)) {
      const first = batch[0].line;
      const last = batch[batch.length - 1].line;
      for (let k = Math.ceil(first / ANCHOR_EVERY_LINES) * ANCHOR_EVERY_LINES; k <= last; k += ANCHOR_EVERY_LINES) {
        const raw = batch[k - first];
        if (raw.terminated) this.addAnchor(raw.line, raw.offset);
      }
      if (last < from) continue;
      if (first >= from && last <= to) {
        yield batch;
      } else {
        const part = batch.filter((l) => l.line >= from && l.line <= to);
        if (part.length > 0) yield part;
      }
      if (last >= to) return;
    }
  }

  async *lines(range: LineRange = {}): AsyncGenerator<RawLine> {
    for await (const batch of this.lineBatches(range)) yield* batch;
  }

  /**
   * The records of `events()`, one array per read chunk (possibly empty). One pass over the chunks:
   * a line outside the range or whose sniffed type is not wanted costs the newline search and the
   * sniff only (no view, no object); the others go through recordOfLine.
   */
  private async *eventBatches(opts: ScanOptions): AsyncGenerator<(JournalRecord | FindingItem)[]> {
    const types = typeFilter(opts.types);
    // Findings go into the batch at their line's position (a line yields a record or a finding,
    // never both), so the consumer sees them in file order between the records.
    let found: Finding | undefined;
    const onFinding = opts.onFinding === undefined ? undefined : (f: Finding) => void (found = f);
    const from = opts.fromLine ?? 0;
    const to = opts.toLine ?? Number.POSITIVE_INFINITY;
    if (from > to) return;
    const start = await this.startFor(from);
    let past = false;
    const visitLine = (buf: Buffer, start: number, end: number, line: number, offset: number, terminated: boolean): JournalRecord | undefined => {
      if (line % ANCHOR_EVERY_LINES === 0 && terminated) this.addAnchor(line, offset);
      if (line < from) return undefined;
      if (line > to) {
        past = true;
        return undefined;
      }
      const raw = { line, offset, bytes: buf.subarray(start, end), terminated };
      if (terminated && types !== undefined) {
        const wanted = types.sniffAt(buf, start, end);
        if (wanted === false) return undefined;
        // a canonical prefix is not blank: parse directly (recordOfLine would sniff again)
        if (wanted === true) return parsedRecord(raw, types, onFinding);
      }
      return recordOfLine(raw, types, onFinding);
    };
    const visit = (buf: Buffer, start: number, end: number, line: number, offset: number, terminated: boolean): JournalRecord | FindingItem | undefined => {
      const rec = visitLine(buf, start, end, line, offset, terminated);
      if (found === undefined) return rec;
      const item = new FindingItem(found);
      found = undefined;
      return item;
    };
    for await (const batch of scanLineChunks(this.fh, visit, start)) {
      yield batch;
      if (past) return;
    }
  }

  /**
   * The contract's raw chunks (`JournalReader.chunks`), read from the file with the next read in
   * flight; every chunk start becomes an anchor for getLine/page/tail. Without `start`, reading
   * begins at `fromLine` itself when that is an anchor interval or more past the best anchor
   * (startFor), else at that anchor.
   */
  async *chunks(opts: ChunkOptions = {}): AsyncGenerator<LineChunk> {
    // startFor validates the anchors itself; a caller's start still needs them checked.
    if (opts.start) await this.validateAnchors();
    const start = opts.start ?? (await this.startFor(opts.fromLine ?? 0));
    const range = { ...opts, fromLine: opts.fromLine ?? start.line };
    for await (const chunk of chunkLines(fileByteRead(this.fh, start.offset), start, range)) {
      if (chunk.terminated) this.addAnchor(chunk.firstLine, chunk.firstOffset);
      yield chunk;
    }
  }

  /**
   * Run `visit` on each physical line of `range` in place in the read chunks (no view, no object
   * per line; the bytes are valid during the call only), yielding once per read chunk. Internal
   * (getLine); other readers of every line use `chunks()`.
   */
  private async *visitLines(visit: LineVisitor<never>, range: LineRange = {}): AsyncGenerator<void> {
    const from = range.fromLine ?? 0;
    const to = range.toLine ?? Number.POSITIVE_INFINITY;
    if (from > to) return;
    const start = await this.startFor(from);
    let past = false;
    const inRange: LineVisitor<never> = (buf, start, end, line, offset, terminated) => {
      if (line % ANCHOR_EVERY_LINES === 0 && terminated) this.addAnchor(line, offset);
      if (line < from) return undefined;
      if (line > to) {
        past = true;
        return undefined;
      }
      return visit(buf, start, end, line, offset, terminated);
    };
    for await (const _ of visitLineChunks(this.fh, inRange, start)) {
      yield;
      if (past) return;
    }
  }

  /** Records are served from the current chunk's batch without an async generator step per record. */
  events(opts: ScanOptions = {}): AsyncIterableIterator<JournalRecord> {
    return new BatchedIterator(this.eventBatches(opts), opts.onFinding);
  }

  async getLine(line: number): Promise<JournalRecord | null> {
    if (!Number.isSafeInteger(line) || line < 0) throw new RangeError(`line must be a non-negative integer, got ${line}`);
    // Through visitLines: the lines before it cost a newline search each (no view, no object);
    // a RawLine per line made a read of the middle of 1 GB take ~0.5 s, ~3× awk.
    let found: RawLine | null = null;
    const visit: LineVisitor<never> = (buf, start, end, l, offset, terminated) => {
      found = { line: l, offset, bytes: Buffer.from(buf.subarray(start, end)), terminated };
      return undefined;
    };
    for await (const _ of this.visitLines(visit, { fromLine: line, toLine: line })) if (found !== null) break;
    const raw = found as RawLine | null;
    if (raw !== null) {
      if (!raw.terminated || isBlankLine(raw.bytes)) return null;
      const parsed = parseEventLine(raw.bytes, raw.line, raw.offset);
      return parsed.ok ? { line: raw.line, offset: raw.offset, bytes: raw.bytes as Buffer, event: parsed.event } : null;
    }
    throw new JournalError("LINE_OUT_OF_RANGE", `line ${line} is past the end of ${this.layout.journal}`, {
      path: this.layout.journal,
      line,
    });
  }

  async page(fromLine: number, limit: number): Promise<PageResult> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const records: JournalRecord[] = [];
    for await (const r of this.events({ fromLine })) {
      if (records.length === limit) return { records, nextLine: r.line };
      records.push(ownRecord(r));
    }
    return { records, nextLine: null };
  }

  /** Newlines in [0, offset): the line number of the line starting at `offset`. */
  private async lineNumberAt(offset: number): Promise<number> {
    let best = { line: 0, offset: 0 };
    for (const [l, o] of this.anchors) if (o <= offset && o >= best.offset) best = { line: l, offset: o };
    let line = best.line;
    let pos = best.offset;
    const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    while (pos < offset) {
      const want = Math.min(READ_CHUNK_BYTES, offset - pos);
      const { bytesRead } = await this.fh.read(chunk, 0, want, pos);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      for (let i = data.indexOf(10); i >= 0; i = data.indexOf(10, i + 1)) line += 1;
      pos += bytesRead;
    }
    this.addAnchor(line, offset);
    return line;
  }

  async tail(n: number): Promise<JournalRecord[]> {
    if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
    await this.validateAnchors();
    const size = await this.size();
    if (n === 0 || size === 0) return [];
    const last = Buffer.alloc(1);
    await this.fh.read(last, 0, 1, size - 1);
    // Walk backwards; the final fragment (no trailing \n) is a torn tail, not an event.
    let skipCurrent = last[0] !== 10;
    let pos = skipCurrent ? size : size - 1; // exclusive end of the unread region (the final \n excluded)
    let pieces: Buffer[] = [];
    // Collected newest first: offset, bytes, index from the end among terminated lines.
    const found: { offset: number; bytes: Buffer; event: JournalRecord["event"]; fromEnd: number }[] = [];
    let fromEnd = 0;
    const finishLine = (lineStart: number): void => {
      const bytes = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces.reverse());
      pieces = [];
      if (!skipCurrent) {
        if (bytes.length > 0 && !isBlankLine(bytes)) {
          const parsed = parseEventLine(bytes, -1, lineStart);
          if (parsed.ok) found.push({ offset: lineStart, bytes: Buffer.from(bytes), event: parsed.event, fromEnd });
        }
        fromEnd += 1;
      }
      skipCurrent = false;
    };
    while (found.length < n) {
      const start = Math.max(0, pos - READ_CHUNK_BYTES);
      const buf = Buffer.allocUnsafe(pos - start);
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await this.fh.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) throw new JournalError("JOURNAL_CHANGED", "the journal shrank during a tail read", { path: this.layout.journal });
        got += bytesRead;
      }
      let right = buf.length;
      for (let nl = right > 0 ? buf.lastIndexOf(10, right - 1) : -1; nl >= 0 && found.length < n; nl = right > 0 ? buf.lastIndexOf(10, right - 1) : -1) {
        pieces.push(buf.subarray(nl + 1, right));
        finishLine(start + nl + 1);
        right = nl;
      }
      if (found.length >= n) break;
      pieces.push(buf.subarray(0, right));
      pos = start;
      if (pos === 0) {
        finishLine(0);
        break;
      }
    }
    if (found.length === 0) return [];
    found.reverse();
    const oldest = found[0];
    const oldestLine = await this.lineNumberAt(oldest.offset);
    return found.map((f) => ({
      line: oldestLine + (oldest.fromEnd - f.fromEnd),
      offset: f.offset,
      bytes: f.bytes,
      event: f.event,
    }));
  }

  async info(): Promise<JournalInfo> {
    const bytes = await this.size();
    const sidecar = await readSidecarStatus(this.layout, bytes);
    const eventSchemaVersion = sidecar.status === "ok" || sidecar.status === "stale" ? sidecar.sidecar.eventSchemaVersion : null;
    return { kind: "plain", bytes, storedBytes: bytes, lines: null, eventSchemaVersion };
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

/**
 * Open the plain journal `events.jsonl` of `exec` for reading.
 *
 * Guarantees: never modifies anything; refuses a FIFO/directory (NOT_A_REGULAR_FILE) without
 * blocking; throws JOURNAL_DIETED when only the dieted pair exists (use `openReader` from the diet
 * package), HALF_PAIR for half a pair, JOURNAL_NOT_FOUND / EXEC_NOT_FOUND otherwise.
 *
 * @example
 *   const r = await openPlainReader("/runs/x");
 *   for await (const rec of r.events({ types: ["state.transition"] })) handle(rec.event);
 *   await r.close();
 */
export async function openPlainReader(exec: ExecRef): Promise<JournalReader> {
  const l = resolveExec(exec);
  const presence = await journalPresence(l);
  if (presence.kind !== "plain") throw missingJournalError(l, presence, false);
  const fh = await openRegularForRead(l.journal);
  return new PlainReader(l, fh);
}
