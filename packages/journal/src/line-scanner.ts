/**
 * Streaming line splitter over raw bytes: large positional reads, split on `\n` with
 * `Buffer.indexOf`, partial lines carried across chunks. Never `node:readline` (it cannot tell a
 * torn final line from a complete one, format §3).
 */
import type { FileHandle } from "node:fs/promises";
import type { ChunkOptions, LineChunk, LinePosition, LineRange, RawLine } from "@hankweave-journal/core";

/** Bytes per positional read: large enough for ~1 GB/s splitting, small enough to stay a window. */
export const READ_CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 10;
const ignore = (): void => undefined;

/** Where a scan starts: a byte offset that begins a line, and that line's number. */
export interface ScanStart {
  offset: number;
  line: number;
}

/**
 * Yield the physical lines of `fh` from `start` to end of file, one array per read chunk.
 *
 * Guarantees: exact offsets; `bytes` exclude the `\n` and are views valid until the iterator
 * advances; the last line is yielded with `terminated: false` when the file does not end in `\n`;
 * memory is bounded by the largest line plus one chunk. Batching keeps the per-line cost of
 * async iteration out of hot loops (measured: ~2× faster scans than one await per line).
 */
export async function* scanRawLineBatches(
  fh: FileHandle,
  start: ScanStart = { offset: 0, line: 0 },
  chunkBytes: number = READ_CHUNK_BYTES,
): AsyncGenerator<RawLine[]> {
  const asRawLine: LineVisitor<RawLine> = (buf, from, end, line, offset, terminated) => ({
    line,
    offset,
    bytes: buf.subarray(from, end),
    terminated,
  });
  for await (const batch of scanLineChunks(fh, asRawLine, start, chunkBytes)) {
    if (batch.length > 0) yield batch;
  }
}

/**
 * Called for each physical line by `scanLineChunks`: the line is `buf[start, end)` (no `\n`),
 * numbered `line`, at file offset `offset`; `terminated` is false only for a final fragment. The
 * bytes are valid only during the call (copy or `subarray` them to keep them for the current batch).
 */
export type LineVisitor<T> = (buf: Buffer, start: number, end: number, line: number, offset: number, terminated: boolean) => T | undefined;

/**
 * Like `scanRawLineBatches`, but no object is created per line: `visit` sees each line in place in
 * the read chunk and returns what to keep (undefined to skip). Yields the kept values once per read
 * chunk (an empty array when none, so a caller can stop between chunks); a view made with
 * `buf.subarray(start, end)` stays valid until the next batch is requested.
 */
export function scanLineChunks<T>(
  fh: FileHandle,
  visit: LineVisitor<T>,
  start: ScanStart = { offset: 0, line: 0 },
  chunkBytes: number = READ_CHUNK_BYTES,
): AsyncGenerator<T[]> {
  return splitLines(fh, visit, start, chunkBytes, false);
}

/**
 * `scanLineChunks` for a visitor that keeps nothing (it sees each line only during its call):
 * reads go into two reused buffers (the next read in flight while a chunk is visited), so a long
 * scan allocates nothing per chunk and its memory stays two chunks plus the longest line. Yields
 * once per read chunk.
 */
export async function* visitLineChunks(
  fh: FileHandle,
  visit: LineVisitor<unknown>,
  start: ScanStart = { offset: 0, line: 0 },
  chunkBytes: number = READ_CHUNK_BYTES,
): AsyncGenerator<void> {
  for await (const _ of splitLines(fh, (b, s, e, l, o, t) => void visit(b, s, e, l, o, t), start, chunkBytes, true)) yield;
}

/**
 * The one newline-splitting loop. Reads run one chunk ahead (on the thread pool) while the
 * current chunk is split and visited: measured, a rebuild of 100 MB otherwise waits ~12% of its
 * time for reads. `reuse`: read into two alternating buffers (views die with the next batch; the
 * unfinished line is copied out), else a fresh buffer per read (views kept by earlier batches stay
 * valid).
 */
async function* splitLines<T>(
  fh: FileHandle,
  visit: LineVisitor<T>,
  start: ScanStart,
  chunkBytes: number,
  reuse: boolean,
): AsyncGenerator<T[]> {
  let position = start.offset;
  let line = start.line;
  let lineOffset = start.offset;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const buffers = reuse ? [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)] : [];
  let which = 0;
  const readAt = (pos: number): Promise<{ chunk: Buffer; bytesRead: number }> => {
    const chunk = reuse ? buffers[which] : Buffer.allocUnsafe(chunkBytes);
    const p = fh.read(chunk, 0, chunkBytes, pos).then((r) => ({ chunk, bytesRead: r.bytesRead }));
    p.catch(ignore); // a read ahead left behind by an early stop must not become an unhandled rejection
    return p;
  };
  let next = readAt(position);
  for (;;) {
    const { chunk, bytesRead } = await next;
    if (bytesRead === 0) break;
    position += bytesRead;
    // With reuse, the other buffer is free: the previous chunk's unfinished line was copied out of it.
    which ^= 1;
    next = readAt(position);
    const data = bytesRead === chunkBytes ? chunk : chunk.subarray(0, bytesRead);
    const batch: T[] = [];
    let from = 0;
    for (let nl = data.indexOf(NEWLINE, 0); nl >= 0; nl = data.indexOf(NEWLINE, from)) {
      let kept: T | undefined;
      if (pendingBytes > 0) {
        pending.push(data.subarray(from, nl));
        const joined = Buffer.concat(pending, pendingBytes + (nl - from));
        pending = [];
        pendingBytes = 0;
        kept = visit(joined, 0, joined.length, line, lineOffset, true);
        lineOffset += joined.length + 1;
      } else {
        kept = visit(data, from, nl, line, lineOffset, true);
        lineOffset += nl - from + 1;
      }
      if (kept !== undefined) batch.push(kept);
      line += 1;
      from = nl + 1;
    }
    if (from < bytesRead) {
      const tail = data.subarray(from, bytesRead);
      pending.push(reuse ? Buffer.from(tail) : tail);
      pendingBytes += bytesRead - from;
    }
    yield batch;
  }
  if (pendingBytes > 0) {
    const joined = Buffer.concat(pending, pendingBytes);
    const kept = visit(joined, 0, joined.length, line, lineOffset, false);
    yield kept === undefined ? [] : [kept];
  }
}

/**
 * Yield every physical line of `fh` from `start` (the flattened `scanRawLineBatches`).
 *
 * @example for await (const l of scanRawLines(fh, { offset: 0, line: 0 })) console.log(l.line, l.offset);
 */
export async function* scanRawLines(
  fh: FileHandle,
  start: ScanStart = { offset: 0, line: 0 },
  chunkBytes: number = READ_CHUNK_BYTES,
): AsyncGenerator<RawLine> {
  for await (const batch of scanRawLineBatches(fh, start, chunkBytes)) yield* batch;
}

/** Bytes per positional read of `seekLineStart` (fewer thread-pool round trips than READ_CHUNK_BYTES). */
export const SEEK_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Where line `target` starts, found from `start` (a line start) by counting `\n` bytes only: no
 * visitor, no view per line, reads of SEEK_CHUNK_BYTES with the next one in flight. Returns
 * `{line: target, offset}` when the file has that line (a final fragment without `\n` counts),
 * else the furthest line start reached (the line after the last `\n`, at end of file), so a scan
 * from the result sees exactly the lines a scan from `start` would have shown from `target` on.
 * `onTerminated(line, offset)` is called for each line whose number is a multiple of `every`
 * (when `every` > 0) and that ends in `\n`, as the line-by-line scans learn their anchors.
 *
 * @example const at = await seekLineStart(fh, { line: 0, offset: 0 }, 720_000);
 */
export async function seekLineStart(
  fh: FileHandle,
  start: ScanStart,
  target: number,
  onTerminated?: (line: number, offset: number) => void,
  every = 0,
  chunkBytes: number = SEEK_CHUNK_BYTES,
): Promise<ScanStart> {
  const { line, offset } = await countLinesTo(fh, start, target, onTerminated, every, chunkBytes);
  return { line, offset };
}

/** seekLineStart's loop; `end` is where reading stopped (end of file when `target` was not reached). */
async function countLinesTo(
  fh: FileHandle,
  start: ScanStart,
  target: number,
  onTerminated: ((line: number, offset: number) => void) | undefined,
  every: number,
  chunkBytes: number,
): Promise<ScanStart & { end: number }> {
  let line = start.line;
  let lineStart = start.offset;
  if (line >= target) return { line, offset: lineStart, end: lineStart };
  const buffers = [Buffer.allocUnsafe(chunkBytes), Buffer.allocUnsafe(chunkBytes)];
  let which = 0;
  let position = start.offset;
  const readAt = (pos: number): Promise<number> => {
    const p = fh.read(buffers[which], 0, chunkBytes, pos).then((r) => r.bytesRead);
    p.catch(ignore); // a read ahead left behind by the return must not become an unhandled rejection
    return p;
  };
  // The next line number that is a multiple of `every` (never reached when there is no callback).
  let nextAnchor = onTerminated && every > 0 ? Math.ceil(line / every) * every : Number.POSITIVE_INFINITY;
  let next = readAt(position);
  for (;;) {
    const bytesRead = await next;
    if (bytesRead === 0) return { line, offset: lineStart, end: position };
    const data = bytesRead === chunkBytes ? buffers[which] : buffers[which].subarray(0, bytesRead);
    which ^= 1;
    const base = position;
    position += bytesRead;
    next = readAt(position);
    for (let nl = data.indexOf(NEWLINE, 0); nl >= 0; nl = data.indexOf(NEWLINE, nl + 1)) {
      // The line `line` (from lineStart) ends at this \n.
      if (line === nextAnchor) {
        (onTerminated as (l: number, o: number) => void)(line, lineStart);
        nextAnchor += every;
      }
      line += 1;
      lineStart = base + nl + 1;
      if (line === target) return { line, offset: lineStart, end: lineStart };
    }
  }
}

/** The result of counting lines without splitting them out. */
export interface NewlineCount {
  /** Number of `\n` bytes in [from, end). */
  newlines: number;
  /** Offset just past the last `\n` seen (== `from` when none). */
  lastLineEnd: number;
  /** Bytes examined (file end − from). */
  end: number;
}

/** Count `\n` bytes from `from` to end of file at memchr speed (no line objects, no parsing; the next read in flight). */
export async function countNewlines(fh: FileHandle, from = 0, chunkBytes: number = SEEK_CHUNK_BYTES): Promise<NewlineCount> {
  const r = await countLinesTo(fh, { line: 0, offset: from }, Number.POSITIVE_INFINITY, undefined, 0, chunkBytes);
  return { newlines: r.line, lastLineEnd: r.offset, end: r.end };
}

/**
 * One sequential read of a byte stream: fill `into[at, at + length)` from where the previous read
 * ended and resolve to the bytes read (0 only at the end). Never called again before it resolved.
 */
export type ByteRead = (into: Buffer, at: number, length: number) => Promise<number>;

/** What `chunkLines` needs besides the stream. */
export interface ChunkLinesOptions extends LineRange {
  /** Bytes per chunk, at least (default READ_CHUNK_BYTES). */
  chunkBytes?: number;
  /** Each chunk in a fresh SharedArrayBuffer the caller owns (else two buffers, reused in turn). */
  shared?: boolean;
}

/**
 * Cut the byte stream `read` (which starts at the line start `start`) into chunks of whole lines:
 * the implementation of `JournalReader.chunks` for any reader that can produce its original bytes
 * in order (the plain file, a dieted journal's rehydrated stream).
 *
 * Guarantees: every chunk but a final torn one ends with `\n`; `firstLine` / `firstOffset` exact;
 * only lines of the range; the next read is in flight while the caller looks at a chunk (measured on
 * the rebuild: reads otherwise cost ~12% of its time); without `shared`, a chunk is valid until the
 * iterator advances; memory is two chunks plus the longest line.
 */
export async function* chunkLines(read: ByteRead, start: LinePosition, opts: ChunkLinesOptions = {}): AsyncGenerator<LineChunk> {
  const size = Math.max(1, opts.chunkBytes ?? READ_CHUNK_BYTES);
  const shared = opts.shared === true;
  const from = opts.fromLine ?? start.line;
  const to = opts.toLine ?? Number.POSITIVE_INFINITY;
  if (from > to) return;
  const alloc = (n: number): Buffer => (shared ? Buffer.from(new SharedArrayBuffer(n)) : Buffer.allocUnsafe(n));
  let cur = alloc(size);
  let spare: Buffer | null = shared ? null : alloc(size);
  let carry = 0; // cur[0, carry) holds an unfinished line (no \n) from earlier reads
  let line = start.line;
  let offset = start.offset;
  const readInto = (buf: Buffer, at: number): Promise<number> => {
    const p = read(buf, at, buf.length - at);
    p.catch(ignore); // a read ahead left behind by an early stop must not become an unhandled rejection
    return p;
  };
  let pending = readInto(cur, 0);
  for (;;) {
    const n = await pending;
    const filled = carry + n;
    // The carried bytes hold no \n: a \n found is in the new bytes.
    const lastNl = n === 0 ? -1 : cur.lastIndexOf(NEWLINE, filled - 1);
    if (lastNl < 0) {
      if (n === 0) {
        if (filled > 0 && line >= from && line <= to) {
          yield { bytes: cur.subarray(0, filled), firstLine: line, firstOffset: offset, lines: 1, terminated: false };
        }
        return;
      }
      if (filled === cur.length) {
        // One line longer than the buffer: keep what was read in a buffer twice the size.
        const bigger = alloc(cur.length * 2);
        cur.copy(bigger, 0, 0, filled);
        cur = bigger;
      }
      carry = filled;
      pending = readInto(cur, carry);
      continue;
    }
    const end = lastNl + 1;
    const rest = filled - end;
    let next = shared ? alloc(Math.max(size, rest * 2)) : spare!;
    if (next.length < Math.max(size, rest * 2)) next = alloc(Math.max(size, rest * 2));
    cur.copy(next, 0, end, filled);
    carry = rest;
    pending = readInto(next, carry);
    const first = line;
    if (first >= from && to === Number.POSITIVE_INFINITY) {
      let lines = 0;
      for (let i = cur.indexOf(NEWLINE, 0); i >= 0 && i < end; i = cur.indexOf(NEWLINE, i + 1)) lines += 1;
      yield { bytes: cur.subarray(0, end), firstLine: first, firstOffset: offset, lines, terminated: true };
      line += lines;
    } else {
      // Trim to the range: find the start of line `from` and the end of line `to` in this chunk.
      let startAt = first >= from ? 0 : -1;
      let stopAt = end;
      let l = first;
      for (let p = 0; p < end; l++) {
        if (l === from) startAt = p;
        p = cur.indexOf(NEWLINE, p) + 1;
        if (l === to) {
          stopAt = p;
          l++;
          break;
        }
      }
      if (startAt >= 0 && startAt < stopAt) {
        const firstIn = Math.max(first, from);
        yield { bytes: cur.subarray(startAt, stopAt), firstLine: firstIn, firstOffset: offset + startAt, lines: l - firstIn, terminated: true };
      }
      if (l > to) return;
      line = l;
    }
    offset += end;
    if (!shared) spare = cur;
    cur = next;
  }
}

/** A ByteRead over `fh` from byte `position` on (positional reads: the handle's own position is not used). */
export function fileByteRead(fh: FileHandle, position: number): ByteRead {
  let pos = position;
  return async (into, at, length) => {
    const { bytesRead } = await fh.read(into, at, length, pos);
    pos += bytesRead;
    return bytesRead;
  };
}

/**
 * A ByteRead over a stream of buffers (e.g. a dieted journal's rehydrated frames), skipping its
 * first `skip` bytes. The buffers are copied into the reader's chunks, so they may be reused.
 */
export function iterableByteRead(source: AsyncIterable<Buffer | Buffer[]>, skip = 0): ByteRead {
  const it = flatten(source)[Symbol.asyncIterator]();
  let buf: Buffer = Buffer.alloc(0);
  let at = 0;
  let toSkip = skip;
  return async (into, intoAt, length) => {
    let written = 0;
    while (written < length) {
      if (at >= buf.length) {
        const r = await it.next();
        if (r.done) break;
        buf = r.value;
        at = 0;
        if (toSkip > 0) {
          const s = Math.min(toSkip, buf.length);
          at = s;
          toSkip -= s;
          continue;
        }
      }
      const n = Math.min(length - written, buf.length - at);
      buf.copy(into, intoAt + written, at, at + n);
      at += n;
      written += n;
    }
    return written;
  };
}

async function* flatten(source: AsyncIterable<Buffer | Buffer[]>): AsyncGenerator<Buffer> {
  for await (const b of source) {
    if (Array.isArray(b)) yield* b;
    else yield b;
  }
}

/**
 * `JournalReader.chunks` over a reader's original bytes from offset 0, given as a stream of buffers
 * (or arrays of buffers): what a reader that cannot read its original file positionally (a dieted
 * journal) implements the fast path with. `opts.start` skips the stream's bytes up to its offset.
 *
 * @example chunks(opts) { return chunksFromStream(this.originalParts(), opts); }
 */
export function chunksFromStream(source: AsyncIterable<Buffer | Buffer[]>, opts: ChunkOptions = {}): AsyncGenerator<LineChunk> {
  const start = opts.start ?? { line: 0, offset: 0 };
  return chunkLines(iterableByteRead(source, start.offset), start, { ...opts, fromLine: opts.fromLine ?? start.line });
}

/**
 * `JournalReader.chunks` built from a reader's own `lines(range)`: for readers whose lines come
 * one by one anyway (a columnar diet rebuilds each line). The line bytes are copied into chunks.
 *
 * @example chunks(opts) { return chunksFromLines((range) => this.lines(range), opts); }
 */
export async function* chunksFromLines(lines: (range: LineRange) => AsyncIterable<RawLine>, opts: ChunkOptions = {}): AsyncGenerator<LineChunk> {
  const from = opts.fromLine ?? opts.start?.line ?? 0;
  const it = lines({ fromLine: from, toLine: opts.toLine })[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return;
  const NL = Buffer.from([NEWLINE]);
  async function* bytes(): AsyncGenerator<Buffer> {
    for (let r = first; !r.done; r = await it.next()) {
      yield r.value.bytes;
      if (r.value.terminated) yield NL;
    }
  }
  const start = { line: first.value.line, offset: first.value.offset };
  yield* chunkLines(iterableByteRead(bytes()), start, { ...opts, fromLine: start.line });
}
