/**
 * Block decoding on worker threads for restore and verify: each worker opens the container and
 * rebuilds the blocks asked of it; answers are taken in block order, at most IN_FLIGHT ahead
 * (bounded memory: one block's bytes each). An error in a worker comes back with its code.
 */
import type { Worker } from "node:worker_threads";
import { JournalError, type ErrorCode } from "@hankweave-journal/core";
import { startWorker } from "@hankweave-journal/cas";
import type { ExtSource } from "./ext-source.js";

/**
 * Blocks requested ahead of the one being consumed (each a ~9 MiB buffer; 3 rather than 4 saved
 * ~18 MB of restore's peak RSS at 1 GB for no CPU, see docs/extended-diet.md).
 */
const IN_FLIGHT = 3;
/**
 * A decode worker's young generation (MB). Its garbage is small and short-lived (a block's row
 * arrays, the shape table's strings); V8's default (up to 48 MB per isolate) was ~25 MB of RSS
 * per worker at 1 GB.
 */
const DECODE_WORKER_YOUNG_MB = 4;
/** From this many original bytes restore and verify decode on worker threads. */
export const DECODE_WORKERS_MIN_BYTES = 32 * 1024 * 1024;
export const DECODE_MAX_WORKERS = 2;

interface Answer {
  id: number;
  data?: Uint8Array;
  /** With data: the address of its region in the worker's shared WebAssembly memory (data a view of it), else absent (data transferred). */
  region?: number;
  error?: { code: ErrorCode | null; message: string; details: Record<string, unknown> };
}

/**
 * A decoded block; `release()` (once, when its bytes are no longer used) gives its buffer back to
 * the worker that made it (a view of the worker's shared memory: the worker then rebuilds another
 * block there, so nothing may read `data` after release).
 */
export interface DecodedBlock {
  data: Buffer;
  release: () => void;
}

function startDecodeWorker(workerData: { path: string | null; expect?: ExtSource["expect"] }): Worker {
  return startWorker(new URL("./decode-worker.js", import.meta.url), { workerData, resourceLimits: { maxYoungGenerationSizeMb: DECODE_WORKER_YOUNG_MB } });
}

/**
 * Decode workers started before their container exists (the diet starts them while its last
 * blocks are encoded, so their start-up and the kernel's compilation overlap the write, not the
 * verification): each waits for the container it is given by `decodeBlocksOnWorkers`.
 * `close()` ends the ones not taken (and is harmless after they were).
 */
export class DecodeCrew {
  private readonly ws: Worker[] = [];
  private readonly failed = new Map<Worker, string>();

  constructor(n: number) {
    for (let i = 0; i < n; i++) {
      const w = startDecodeWorker({ path: null });
      w.on("error", (e) => this.failed.set(w, e.message));
      w.on("exit", (code) => { if (!this.failed.has(w)) this.failed.set(w, `exited (${code})`); });
      this.ws.push(w);
    }
  }

  get size(): number {
    return this.ws.length;
  }

  /** Up to `n` of the workers, given the container at `path` (the rest ended); throws WORKER_FAILED for one that already failed. */
  take(n: number, path: string, expect: ExtSource["expect"]): Worker[] {
    const ws = this.ws.splice(0, n);
    void this.close();
    for (const w of ws) {
      const why = this.failed.get(w);
      if (why !== undefined) {
        for (const x of ws) void x.terminate();
        throw new JournalError("WORKER_FAILED", `a decode worker failed: ${why}`, { path });
      }
      w.postMessage({ open: { path, expect } });
    }
    return ws;
  }

  async close(): Promise<void> {
    await Promise.all(this.ws.splice(0).map((w) => w.terminate()));
  }
}

/**
 * The blocks of `src` as original bytes, in order, decoded by `workers` threads (taken from
 * `crew` when given: `workers` of its threads at most, started earlier).
 */
export async function* decodeBlocksOnWorkers(src: ExtSource, workers: number, crew?: DecodeCrew): AsyncGenerator<DecodedBlock> {
  const ws: Worker[] = [];
  const given = crew === undefined ? [] : crew.take(workers, src.path, src.expect);
  const pending = new Map<number, { resolve: (b: DecodedBlock) => void; reject: (e: Error) => void }>();
  let done = false;
  const fail = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  for (let i = 0; i < workers; i++) {
    const w = given[i] ?? startDecodeWorker({ path: src.path, expect: src.expect });
    w.on("message", (m: Answer) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (!p) return;
      if (m.data && m.region !== undefined) {
        const region = m.region;
        p.resolve({ data: Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength), release: () => {
          if (!done) w.postMessage({ free: region });
        } });
      }
      else if (m.data) {
        const ab = m.data.buffer as ArrayBuffer;
        const back = () => {
          // Transferred back: the buffer is detached here, so nothing can read it after release.
          if (!done) w.postMessage({ recycle: ab }, [ab]);
        };
        p.resolve({ data: Buffer.from(ab, m.data.byteOffset, m.data.byteLength), release: back });
      }
      else if (m.error?.code) p.reject(new JournalError(m.error.code, m.error.message, m.error.details));
      else p.reject(new JournalError("WORKER_FAILED", `a decode worker failed: ${m.error?.message ?? "unknown"}`, { path: src.path }));
    });
    w.on("error", (e) => fail(new JournalError("WORKER_FAILED", `a decode worker failed: ${e.message}`, { path: src.path })));
    w.on("exit", (code) => fail(new JournalError("WORKER_FAILED", `a decode worker exited (${code})`, { path: src.path })));
    ws.push(w);
  }
  const asked: Promise<DecodedBlock>[] = [];
  const ask = (k: number) => {
    const p = new Promise<DecodedBlock>((resolve, reject) => pending.set(k, { resolve, reject }));
    p.catch(() => undefined);
    ws[k % ws.length].postMessage({ id: k, k });
    asked.push(p);
  };
  try {
    let next = 0;
    for (let k = 0; k < src.blocks.length; k++) {
      while (next < src.blocks.length && next < k + IN_FLIGHT) ask(next++);
      yield await (asked.shift() as Promise<DecodedBlock>);
    }
  } finally {
    done = true;
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
