/**
 * Block decoding on worker threads for restore and verify: each worker opens the container and
 * rebuilds the blocks asked of it; answers are taken in block order, at most IN_FLIGHT ahead
 * (bounded memory: one block's bytes each). An error in a worker comes back with its code.
 */
import type { Worker } from "node:worker_threads";
import { JournalError, type ErrorCode } from "@hankweave-journal/core";
import { startWorker } from "@hankweave-journal/cas";
import type { ExtSource } from "./ext-source.js";

/** Blocks requested ahead of the one being consumed. */
const IN_FLIGHT = 4;
/** From this many original bytes restore and verify decode on worker threads. */
export const DECODE_WORKERS_MIN_BYTES = 32 * 1024 * 1024;
export const DECODE_MAX_WORKERS = 2;

interface Answer {
  id: number;
  data?: Uint8Array;
  error?: { code: ErrorCode | null; message: string; details: Record<string, unknown> };
}

/** The blocks of `src` as original bytes, in order, decoded by `workers` threads. */
export async function* decodeBlocksOnWorkers(src: ExtSource, workers: number): AsyncGenerator<Buffer> {
  const ws: Worker[] = [];
  const pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  const fail = (e: Error) => {
    for (const p of pending.values()) p.reject(e);
    pending.clear();
  };
  for (let i = 0; i < workers; i++) {
    const w = startWorker(new URL("./decode-worker.js", import.meta.url), { workerData: { path: src.path, expect: src.expect } });
    w.on("message", (m: Answer) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      if (!p) return;
      if (m.data) p.resolve(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
      else if (m.error?.code) p.reject(new JournalError(m.error.code, m.error.message, m.error.details));
      else p.reject(new JournalError("WORKER_FAILED", `a decode worker failed: ${m.error?.message ?? "unknown"}`, { path: src.path }));
    });
    w.on("error", (e) => fail(new JournalError("WORKER_FAILED", `a decode worker failed: ${e.message}`, { path: src.path })));
    w.on("exit", (code) => fail(new JournalError("WORKER_FAILED", `a decode worker exited (${code})`, { path: src.path })));
    ws.push(w);
  }
  const asked: Promise<Buffer>[] = [];
  const ask = (k: number) => {
    const p = new Promise<Buffer>((resolve, reject) => pending.set(k, { resolve, reject }));
    p.catch(() => undefined);
    ws[k % ws.length].postMessage({ id: k, k });
    asked.push(p);
  };
  try {
    let next = 0;
    for (let k = 0; k < src.blocks.length; k++) {
      while (next < src.blocks.length && next < k + IN_FLIGHT) ask(next++);
      yield await (asked.shift() as Promise<Buffer>);
    }
  } finally {
    await Promise.all(ws.map((w) => w.terminate()));
  }
}
