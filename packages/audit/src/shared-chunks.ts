/**
 * Plain-journal reading for the two-thread index build: the file is read in chunks of whole lines
 * into SharedArrayBuffers, so the insert worker can classify (parse) a chunk's lines while the
 * main thread folds the previous chunk, without copying the bytes.
 *
 * Guarantees: every chunk holds only complete (`\n`-terminated) lines, the first at `firstOffset`
 * numbered `firstLine`; a line longer than a chunk gets a chunk of its own (grown as needed); the
 * bytes after the last `\n` of the file come back once as `tail` (a torn fragment), never in a chunk.
 */
import * as fsp from "node:fs/promises";
import type { ScanStart } from "@hankweave-journal/journal";

/** Bytes per read (a chunk is at least this big, more when one line is longer). */
export const SHARED_CHUNK_BYTES = 2 * 1024 * 1024;

/** A run of complete lines in shared memory. */
export interface SharedChunk {
  buffer: SharedArrayBuffer;
  /** Bytes of complete lines from index 0 (the last one ends with `\n` at `length - 1`). */
  length: number;
  firstLine: number;
  firstOffset: number;
  /** Lines in the chunk. */
  lines: number;
  /** Who parses the chunk: 0 nobody yet, 1 the worker, 2 the main thread (set with Atomics.compareExchange). */
  claim: Int32Array;
}

/** What follows the last chunk. */
export interface ChunkTail {
  /** Bytes after the last `\n` (a torn final line), or null. */
  tail: Buffer | null;
  tailLine: number;
  tailOffset: number;
}

const NEWLINE = 10;

function countLines(buf: Buffer, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE, 0); i >= 0 && i < end; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** Reads `path` from `start` as SharedChunks; `end()` tells about the tail once the chunks are exhausted. */
export class SharedChunkReader {
  private fh: fsp.FileHandle | null = null;
  private position: number;
  private line: number;
  private carry: Buffer = Buffer.alloc(0);
  private eof = false;

  constructor(private readonly path: string, start: ScanStart = { offset: 0, line: 0 }, private readonly chunkBytes = SHARED_CHUNK_BYTES) {
    this.position = start.offset;
    this.line = start.line;
  }

  /** The next chunk of complete lines, or null at end of file. */
  async next(): Promise<SharedChunk | null> {
    if (this.eof) return null;
    this.fh ??= await fsp.open(this.path, "r");
    let size = Math.max(this.chunkBytes, this.carry.length * 2);
    for (;;) {
      const buffer = new SharedArrayBuffer(size);
      const buf = Buffer.from(buffer);
      this.carry.copy(buf, 0);
      let filled = this.carry.length;
      while (filled < size) {
        const { bytesRead } = await this.fh.read(buf, filled, size - filled, this.position);
        if (bytesRead === 0) {
          this.eof = true;
          break;
        }
        this.position += bytesRead;
        filled += bytesRead;
      }
      const lastNl = filled === 0 ? -1 : buf.lastIndexOf(NEWLINE, filled - 1);
      if (lastNl < 0 && !this.eof) {
        // One line longer than the buffer: keep what was read and try a buffer twice the size.
        this.carry = Buffer.from(buf.subarray(0, filled));
        size *= 2;
        continue;
      }
      const length = lastNl + 1;
      const firstOffset = this.position - filled;
      this.carry = Buffer.from(buf.subarray(length, filled));
      if (length === 0) return null; // end of file: only a tail (or nothing) is left
      const lines = countLines(buf, length);
      const chunk: SharedChunk = { buffer, length, firstLine: this.line, firstOffset, lines, claim: new Int32Array(new SharedArrayBuffer(4)) };
      this.line += lines;
      return chunk;
    }
  }

  /** The torn tail after the last chunk (call once `next()` returned null). */
  end(): ChunkTail {
    return { tail: this.carry.length > 0 ? this.carry : null, tailLine: this.line, tailOffset: this.position - this.carry.length };
  }

  async close(): Promise<void> {
    await this.fh?.close();
    this.fh = null;
  }
}
