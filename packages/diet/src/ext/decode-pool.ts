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
/**
 * Restore rebuilds an extended diet in its own thread below this many original bytes, on
 * DECODE_MAX_WORKERS decode workers from it. Each worker pays its start (~40–50 ms of CPU) and its
 * own cold first blocks (~90 ms for block 0 against ~22 ms warm; JIT per isolate), and on two cores
 * the main thread's hashing and writes share the cores with them: at 100 MB (12 blocks), quiet,
 * in-op ms, 4 alternated rounds, real: two workers 540/388/427/392, one 322/413/333/394, this
 * thread 383/371/338/321; body-heavy 475/397/368/395, 338/349/399/377, 385/357/325/285 (user+sys
 * 0.76–1.15 → 0.49–0.74 s, peak RSS 162–164 → 101–104 MB; zstd -d + fsync 160–200 ms). Two workers cost about 215 ms + 15 ms a block there, this
 * thread about 16 + 27 ms a block: they cross near 17 blocks (~140 MB); at 1 GB two workers meet
 * zstd -d + fsync and one thread does not.
 */
export const EXT_RESTORE_WORKERS_MIN_BYTES = 128 * 1024 * 1024;

/** Decode workers for restoring an extended diet of `originalBytes` (0: in this thread). */
export function extRestoreWorkersFor(originalBytes: number): number {
  return originalBytes < EXT_RESTORE_WORKERS_MIN_BYTES ? 0 : DECODE_MAX_WORKERS;
}

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

/**
 * The blocks of `src` rebuilt in this thread, in order, each straight into a kept region of this
 * thread's rebuild kernel memory (`release` frees it for a later block: no new 8 MiB buffer, and
 * its page faults, per block; a block the kernel gives up is a buffer of its own). Between blocks
 * the event loop runs (the write of the block before completes meanwhile).
 */
export async function* decodeBlocksInThread(src: ExtSource): AsyncGenerator<DecodedBlock> {
  for (let k = 0; k < src.blocks.length; k++) {
    const { data, region } = src.decodeBytes(k, undefined, true);
    yield { data, release: () => src.freeRegion(region) };
    await new Promise<void>((r) => setImmediate(r));
  }
}
