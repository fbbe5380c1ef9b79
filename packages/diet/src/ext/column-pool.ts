/**
 * The extended diet's per-block work on worker threads (one per core, at most 2), or in this
 * thread when the pool has no workers. Three jobs:
 *
 * - `columns`: the column pass over a block, which stays in the worker that ran it; what comes
 *   back is the block's long text pieces (bytes and hashes) for the pack's dedupe, and its counts;
 * - `seal`: with the pack's ids of those pieces, the same worker encodes the text streams and
 *   returns the block record (then forgets the block);
 * - `compress`: one pack frame at a level, on the least busy worker.
 *
 * So the writing thread only deduplicates and writes. Answers come back in any order and are
 * matched by id. A worker that dies or errs fails its jobs (the diet then publishes nothing).
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "@hankweave-journal/cas";
import { encodeColumns, longPiecesOf, sealWithIds, type ColumnBlock, type LongPieces, type PieceCuts } from "./block-codec.js";
import { zstdCompress } from "./zstd.js";

/** What the writing thread learns of a block from its column pass. */
export interface ColumnsDone {
  /** The job to seal (the block stays where its column pass ran). */
  job: number;
  pieces: LongPieces;
  lines: number;
  events: number;
  encodedLines: number;
  /** Text values (each one or more pieces). */
  values: number;
}

/** A column pass awaiting its seal. */
export interface HeldBlock {
  c: ColumnBlock;
  /** Where its text values' pieces end (found with the long pieces, used by the seal). */
  cuts: PieceCuts;
}

/** A message to a column worker. */
export type ColumnJob =
  | { op: "columns"; id: number; input: Uint8Array; level: number; seed: number }
  | { op: "seal"; id: number; job: number; ids: Int32Array; level: number }
  | { op: "compress"; id: number; raw: Uint8Array; level: number };

/** A worker's answer: `{id, done}` (columns), `{id, out}` (seal, compress) or `{id, error}`. */
export interface ColumnAnswer {
  id: number;
  done?: ColumnsDone;
  out?: Uint8Array;
  error?: { message: string };
}

/** The jobs' work, the same in a worker and in this thread: `blocks` holds the column passes awaiting their seal. */
export function runColumnJob(m: ColumnJob, blocks: Map<number, HeldBlock>): { answer: ColumnAnswer; transfer: ArrayBuffer[] } {
  if (m.op === "columns") {
    const input = Buffer.from(m.input.buffer, m.input.byteOffset, m.input.byteLength);
    const c = encodeColumns(input, m.level);
    const cuts: PieceCuts = { ends: new Uint32Array(0), long: new Uint8Array(0) };
    const pieces = longPiecesOf(c.textBytes, c.textEnds, m.seed, cuts);
    blocks.set(m.id, { c, cuts });
    const done: ColumnsDone = { job: m.id, pieces, lines: c.lines, events: c.events, encodedLines: c.encodedLines, values: c.textEnds.length };
    const transfer = pieces.bytes.length > 0 ? [pieces.bytes.buffer as ArrayBuffer, pieces.starts.buffer as ArrayBuffer, pieces.ends.buffer as ArrayBuffer, pieces.hashes.buffer as ArrayBuffer] : [];
    return { answer: { id: m.id, done }, transfer };
  }
  if (m.op === "seal") {
    const held = blocks.get(m.job);
    if (held === undefined) throw new Error(`no column pass ${m.job} to seal`);
    blocks.delete(m.job);
    return { answer: { id: m.id, out: sealWithIds(held.c, m.ids, m.level, held.cuts) }, transfer: [] };
  }
  return { answer: { id: m.id, out: zstdCompress(m.raw, m.level) }, transfer: [] };
}

interface Pending {
  resolve: (a: ColumnAnswer) => void;
  reject: (e: Error) => void;
}

interface Slot {
  w: Worker;
  busy: number;
  jobs: Set<number>;
}

export class ColumnPool {
  private readonly workers: Slot[] = [];
  private readonly pending = new Map<number, Pending>();
  /** Which worker holds each column pass until its seal (the job id → its slot). */
  private readonly holder = new Map<number, Slot>();
  /** Column passes awaiting their seal, when the pool has no workers. */
  private readonly here = new Map<number, HeldBlock>();
  private nextId = 0;

  constructor(private readonly size: number) {}

  private start(): void {
    for (let i = 0; i < this.size; i++) {
      const w = startWorker(new URL("./column-worker.js", import.meta.url));
      const slot: Slot = { w, busy: 0, jobs: new Set<number>() };
      w.on("message", (m: ColumnAnswer) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        slot.busy--;
        slot.jobs.delete(m.id);
        if (!p) return;
        if (m.error) p.reject(new Error(`column worker: ${m.error.message}`));
        else p.resolve(m);
      });
      const fail = (e: Error) => {
        for (const id of slot.jobs) {
          this.pending.get(id)?.reject(e);
          this.pending.delete(id);
        }
        slot.jobs.clear();
      };
      w.on("error", fail);
      w.on("exit", (code) => fail(new Error(`column worker exited (${code})`)));
      this.workers.push(slot);
    }
  }

  private run(m: ColumnJob, slot: Slot | null, transfer: ArrayBuffer[] = []): Promise<ColumnAnswer> {
    if (this.size === 0) {
      try {
        return Promise.resolve(runColumnJob(m, this.here).answer);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    if (this.workers.length === 0) this.start();
    const s = slot ?? this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    if (m.op === "columns") this.holder.set(m.id, s);
    s.busy++;
    s.jobs.add(m.id);
    return new Promise<ColumnAnswer>((resolve, reject) => {
      this.pending.set(m.id, { resolve, reject });
      s.w.postMessage(m, transfer);
    });
  }

  /**
   * The column pass over `input` (a block of whole lines), transferred to the worker when `own`
   * (the caller gives up input's whole ArrayBuffer) or when it is the whole of its ArrayBuffer.
   */
  async columns(input: Buffer, level: number, seed: number, own = false): Promise<ColumnsDone> {
    const transfer = own || (input.byteOffset === 0 && input.byteLength === input.buffer.byteLength) ? [input.buffer as ArrayBuffer] : [];
    const a = await this.run({ op: "columns", id: this.nextId++, input, level, seed }, null, transfer);
    const d = a.done as ColumnsDone;
    const p = d.pieces;
    p.bytes = Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength);
    return d;
  }

  /** The record of the block of job `job`, given the pack's ids of its long pieces. */
  async seal(job: number, ids: Int32Array, level: number): Promise<Buffer> {
    const slot = this.holder.get(job) ?? null;
    this.holder.delete(job);
    const a = await this.run({ op: "seal", id: this.nextId++, job, ids, level }, slot);
    const out = a.out as Uint8Array;
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  }

  /** One zstd frame of `raw` at `level` (copied to the worker: the caller keeps `raw`). */
  async compress(raw: Buffer, level: number): Promise<Buffer> {
    const a = await this.run({ op: "compress", id: this.nextId++, raw, level }, null);
    const out = a.out as Uint8Array;
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  }

  async close(): Promise<void> {
    const ws = this.workers.splice(0);
    await Promise.all(ws.map((s) => s.w.terminate()));
  }
}
