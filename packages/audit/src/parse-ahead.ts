/**
 * Folding a plain journal with a worker thread parsing ahead (used by `index` and `audit`).
 *
 * The journal is read in chunks of whole lines into shared memory (`SharedChunkReader`). Chunk
 * k+1 is handed to the worker (`IndexWorker.scan`) while chunk k is folded here, unless the worker
 * is behind with its inserts (more than MAX_BACKLOG_TO_SCAN row batches pending): then this thread
 * parses it. A chunk handed over is parsed by whichever thread claims it first (Atomics on
 * `chunk.claim`): the worker, which JSON.parses every line and returns, per line, "blank", "valid
 * non-transition envelope (id, timestamp, type, codon)" or "anything else"; or this thread, when
 * it gets to the chunk before the worker started on it. So the parsing goes to whichever thread
 * has time. Lines the
 * worker proved to be valid non-transition envelopes go to `fold.envelope`; every other line goes
 * through the reader's `parseEventLine`, exactly as `feedRawLine` does — except the hot
 * transitions (CostsIncremented, AssistantMessageCountUpdated: 97% of the transition lines), which
 * the state package's `HotTransitionParser.matchEvent` reads from a byte template into the very
 * object JSON.parse would give (any other shape falls back to `parseEventLine`; about half the CPU
 * of the parse, most of it V8's slow path for the 17-digit costs). So the fold sees the same
 * events and findings, in the same order, whoever parsed a chunk (tests compare all three ways).
 */
import { isBlankLine, parseEventLine, tornTailFinding, typeFilter, type ScanStart } from "@hankweave-journal/journal";
import { HotTransitionParser } from "@hankweave-journal/state";
import type { AuditFold } from "./audit-fold.js";
import type { ChunkScan, IndexWorker } from "./index-worker.js";
import { SharedChunkReader, type SharedChunk } from "./shared-chunks.js";

const NEWLINE = 10;
/** Where the id string starts in a line matched by the hot templates (`{"id":"`). */
const ID_AT = 7;
/** Sniffs a canonical `state.transition` envelope prefix (true), another type (false), or cannot tell. */
const TRANSITION_SNIFF = typeFilter(["state.transition"])!.sniffAt;
/** Row batches the worker may have pending and still be asked to parse the next chunk. */
const MAX_BACKLOG_TO_SCAN = 1;

/** Lines and bytes read so far, and where the last complete line is. */
export interface Seen {
  line: number;
  offset: number;
  length: number;
  count: number;
  bytes: number;
}

/** Read size and who parses (the defaults suit production; tests use tiny chunks and each parser). */
export interface ParseAheadOptions {
  /** Bytes per read (default SHARED_CHUNK_BYTES). */
  chunkBytes?: number;
  /** `both` (default: the worker, unless this thread gets to a chunk first), or only `main` / only `worker`. */
  parser?: "both" | "main" | "worker";
}

/** What the caller does between lines and chunks. */
export interface FoldHooks {
  /** Called before line `line` is fed; `false` stops the fold there (the line is not fed). */
  beforeLine?(line: number): boolean;
  /** Called after each line is fed; a returned promise is awaited before the next line. */
  afterLine?(): Promise<void> | undefined;
  /** Called after each chunk; awaited. */
  afterChunk?(): Promise<void>;
}

/**
 * Fold the plain journal `journal` from `start` into `fold` (see the module comment), counting
 * lines and bytes into `seen`. Returns false when `hooks.beforeLine` stopped it.
 */
export async function foldPlainJournal(
  fold: AuditFold, worker: IndexWorker, journal: string, start: ScanStart, seen: Seen, opts: ParseAheadOptions = {}, hooks: FoldHooks = {},
): Promise<boolean> {
  const chunks = new SharedChunkReader(journal, start, opts.chunkBytes);
  const parser = opts.parser ?? "both";
  /** The next chunk and its scan by the worker; no scan (claimed here) when the worker is busy inserting. */
  const read = async (): Promise<[SharedChunk, Promise<ChunkScan> | null] | null> => {
    const c = await chunks.next();
    if (c === null) return null;
    if (parser === "main" || (parser === "both" && worker.backlog > MAX_BACKLOG_TO_SCAN)) {
      Atomics.store(c.claim, 0, 2);
      return [c, null];
    }
    return [c, worker.scan(c)];
  };
  const { beforeLine, afterLine } = hooks;
  const hot = new HotTransitionParser();
  try {
    let cur = await read();
    while (cur !== null) {
      const [chunk, scan] = cur;
      const next = await read();
      // Parse the chunk here when the worker was not asked to or has not started on it.
      const mine = scan === null || (parser === "both" && Atomics.compareExchange(chunk.claim, 0, 0, 2) === 0);
      const { kinds, strs } = mine ? { kinds: null, strs: null } : await (scan as Promise<ChunkScan>);
      const buf = Buffer.from(chunk.buffer, 0, chunk.length);
      let s = 0;
      let from = 0;
      let line = chunk.firstLine;
      for (let i = 0; i < chunk.lines; i++, line++) {
        if (beforeLine !== undefined && !beforeLine(line)) return false;
        const nl = buf.indexOf(NEWLINE, from);
        const offset = chunk.firstOffset + from;
        const kind = kinds === null ? (isBlankLine(buf.subarray(from, nl)) ? 0 : 2) : kinds[i];
        if (kind === 1) {
          const e = strs as (string | null)[];
          fold.envelope(line, offset, nl - from, e[s] as string, e[s + 1] as string, e[s + 2] as string, e[s + 3]);
          s += 4;
        } else if (kind === 2) {
          // The hot transitions (97% of them) match a byte template: the event JSON.parse would give, without it.
          const hotEvent = TRANSITION_SNIFF(buf, from, nl) === true ? hot.matchEvent(buf, from, nl) : undefined;
          if (hotEvent !== undefined) {
            // The id is a slice of the decoded line; the fold keeps ids, so copy it out of the line.
            hotEvent.id = buf.toString("latin1", from + ID_AT, from + ID_AT + hotEvent.id.length);
            fold.event({ line, offset, size: nl - from, event: hotEvent });
          }
          else {
            const parsed = parseEventLine(buf.subarray(from, nl), line, offset);
            if (!parsed.ok) fold.finding(parsed.finding);
            else fold.event({ line, offset, size: nl - from, event: parsed.event });
          }
        }
        seen.count += 1;
        seen.bytes += nl - from + 1;
        seen.line = line;
        seen.offset = offset;
        seen.length = nl - from + 1;
        from = nl + 1;
        if (afterLine !== undefined) {
          const p = afterLine();
          if (p !== undefined) await p;
        }
      }
      await hooks.afterChunk?.();
      cur = next;
    }
    const end = chunks.end();
    if (end.tail !== null) {
      if (beforeLine !== undefined && !beforeLine(end.tailLine)) return false;
      seen.count += 1;
      seen.bytes += end.tail.length;
      fold.finding(tornTailFinding({ line: end.tailLine, offset: end.tailOffset, bytes: end.tail, terminated: false }));
      if (afterLine !== undefined) await afterLine();
    }
    return true;
  } finally {
    await chunks.close();
  }
}
