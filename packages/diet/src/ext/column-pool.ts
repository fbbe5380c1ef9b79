/**
 * The column pass on worker threads (one per core, at most 2), or in this thread when the pool
 * has no workers. Jobs go to the least busy worker; answers come back in any order and are
 * matched by id. A worker that dies or errs fails its jobs (the diet then publishes nothing).
 */
import type { Worker } from "node:worker_threads";
import { startWorker } from "@hankweave-journal/cas";
import { encodeColumns, type ColumnBlock } from "./block-codec.js";

interface Pending {
  resolve: (b: ColumnBlock) => void;
  reject: (e: Error) => void;
}

export class ColumnPool {
  private readonly workers: { w: Worker; busy: number; jobs: Set<number> }[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  constructor(private readonly size: number) {}

  private start(): void {
    for (let i = 0; i < this.size; i++) {
      const w = startWorker(new URL("./column-worker.js", import.meta.url));
      const slot = { w, busy: 0, jobs: new Set<number>() };
      w.on("message", (m: { id: number; block?: ColumnBlock; error?: { message: string } }) => {
        const p = this.pending.get(m.id);
        this.pending.delete(m.id);
        slot.busy--;
        slot.jobs.delete(m.id);
        if (!p) return;
        if (m.block) {
          m.block.streams = m.block.streams.map((s) => Buffer.from(s.buffer, s.byteOffset, s.byteLength));
          p.resolve(m.block);
        } else p.reject(new Error(`column worker: ${m.error?.message ?? "failed"}`));
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

  /** The column pass over `input` (a block of whole lines). */
  columns(input: Buffer, level: number): Promise<ColumnBlock> {
    if (this.size === 0) {
      try {
        return Promise.resolve(encodeColumns(input, level));
      } catch (e) {
        return Promise.reject(e);
      }
    }
    if (this.workers.length === 0) this.start();
    const slot = this.workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    const id = this.nextId++;
    slot.busy++;
    slot.jobs.add(id);
    return new Promise<ColumnBlock>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      slot.w.postMessage({ id, input, level });
    });
  }

  async close(): Promise<void> {
    const ws = this.workers.splice(0);
    await Promise.all(ws.map((s) => s.w.terminate()));
  }
}
