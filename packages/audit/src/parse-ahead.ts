/**
 * Folding a journal with a worker thread parsing ahead (used by `index` and `audit`, plain and
 * dieted journals alike).
 *
 * The journal is read through the reader's raw chunks in shared memory
 * (`reader.chunks({shared: true})`, the contract's fast path). Chunk
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
import type { JournalReader, LineChunk, LinePosition } from "@hankweave-journal/core";
import { isBlankLine, parseEventLine, tornTailFinding, typeFilter } from "@hankweave-journal/journal";
import { HotTransitionParser } from "@hankweave-journal/state";
import type { AuditFold } from "./audit-fold.js";
import type { ChunkScan, IndexWorker } from "./index-worker.js";

const NEWLINE = 10;
/** Where the id string starts in a line matched by the hot templates (`{"id":"`). */
const ID_AT = 7;
/** Sniffs a canonical `state.transition` envelope prefix (true), another type (false), or cannot tell. */
const TRANSITION_SNIFF = typeFilter(["state.transition"])!.sniffAt;
/** Bytes per shared chunk (a chunk is larger when one line is longer). */
export const SHARED_CHUNK_BYTES = 2 * 1024 * 1024;
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
  /** Bytes per chunk (default SHARED_CHUNK_BYTES). */
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
  /** Called after each chunk of whole lines (not the torn fragment) with that chunk; awaited. */
  afterChunk?(chunk: LineChunk): Promise<void>;
}

/**
 * Fold the journal of `reader` from `start` into `fold` (see the module comment), counting lines
 * and bytes into `seen`. Returns false when `hooks.beforeLine` stopped it.
 */
export async function foldWithParseAhead(
  fold: AuditFold, worker: IndexWorker, reader: JournalReader, start: LinePosition, seen: Seen, opts: ParseAheadOptions = {}, hooks: FoldHooks = {},
): Promise<boolean> {
  const chunks = reader.chunks({ start, shared: true, chunkBytes: opts.chunkBytes ?? SHARED_CHUNK_BYTES })[Symbol.asyncIterator]();
  const parser = opts.parser ?? "both";
  /** Who parses the chunk: 0 nobody yet, 1 the worker, 2 this thread (Atomics.compareExchange). */
  type Claimed = { chunk: LineChunk; claim: Int32Array };
  /** The next chunk and its scan by the worker; no scan (claimed here) when the worker is busy inserting or for the torn fragment. */
  const read = async (): Promise<[Claimed, Promise<ChunkScan> | null] | null> => {
    const r = await chunks.next();
    if (r.done) return null;
    const c: Claimed = { chunk: r.value, claim: new Int32Array(new SharedArrayBuffer(4)) };
    if (!c.chunk.terminated || parser === "main" || (parser === "both" && worker.backlog > MAX_BACKLOG_TO_SCAN)) {
      Atomics.store(c.claim, 0, 2);
      return [c, null];
    }
    return [c, worker.scan(c.chunk, c.claim)];
  };
  const { beforeLine, afterLine } = hooks;
  const hot = new HotTransitionParser();
  try {
    let cur = await read();
    while (cur !== null) {
      const [{ chunk, claim }, scan] = cur;
      const next = await read();
      if (!chunk.terminated) {
        // The torn fragment (always the last chunk).
        if (beforeLine !== undefined && !beforeLine(chunk.firstLine)) return false;
        seen.count += 1;
        seen.bytes += chunk.bytes.length;
        fold.finding(tornTailFinding({ line: chunk.firstLine, offset: chunk.firstOffset, bytes: chunk.bytes, terminated: false }));
        if (afterLine !== undefined) await afterLine();
        cur = next;
        continue;
      }
      // Parse the chunk here when the worker was not asked to or has not started on it.
      const mine = scan === null || (parser === "both" && Atomics.compareExchange(claim, 0, 0, 2) === 0);
      const { kinds, strs } = mine ? { kinds: null, strs: null } : await (scan as Promise<ChunkScan>);
      const buf = chunk.bytes;
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
      await hooks.afterChunk?.(chunk);
      cur = next;
    }
    return true;
  } finally {
    await chunks.return?.();
  }
}
