/**
 * A small pool of worker threads running the same one-shot `ZSTD_compressCCtx` as
 * `compressOneShot` (libzstd through `zstd-napi`), so level-19 CAS bodies compress on every core
 * instead of on the main thread. Same library, same call, same level: the frames are
 * byte-identical to `compressOneShot`'s (tested).
 *
 * The worker is the module `zstd.worker.ts` (started by `startWorker`, from the sources or the
 * built package alike). Workers are created lazily, keep the process alive only while jobs are
 * pending, and are terminated by `close()`.
 */
import { availableParallelism } from "node:os";
import type { Worker } from "node:worker_threads";
import { assertZstdNative } from "./zstd-native.js";
import { startWorker } from "./worker-start.js";
import { ERROR_CODES, JournalError, type ErrorCode } from "@hankweave-journal/core";
import { workerError } from "@hankweave-journal/journal";
import type { ZstdWorkerFile, ZstdWorkerReply, ZstdWorkerRequest } from "./zstd.worker.js";

/** Workers in a default pool: one per core, at most this many. */
export const ZSTD_POOL_MAX_WORKERS = 2;


interface Job {
  id: number;
  data: Uint8Array;
  level: number;
  /** Move `data`'s buffer to the worker instead of copying it. */
  transfer: boolean;
  /** Written by the worker (the reply is the frame's size). */
  file?: ZstdWorkerFile;
  resolve(r: Buffer | number): void;
  reject(e: Error): void;
}

/** The coded error of a failed job: the worker's JournalError code, an errno's (ioError), else WORKER_FAILED. */
function replyError(m: { error: string; code?: string }, path: string | undefined): Error {
  if (path === undefined) return new Error(`zstd worker: ${m.error}`);
  if (m.code !== undefined && Object.hasOwn(ERROR_CODES, m.code)) return new JournalError(m.code as ErrorCode, m.error, { path });
  return workerError({ code: m.code, message: m.error }, path);
}

interface Slot {
  worker: Worker;
  job: Job | null;
}

/** A pool of compression workers; `compress` resolves in any order, each to its own frame. */
export class ZstdPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(private readonly size: number = Math.max(1, Math.min(ZSTD_POOL_MAX_WORKERS, availableParallelism()))) {
    if (size < 1) throw new RangeError("pool size must be ≥ 1");
  }

  /** Jobs queued or running. */
  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.job !== null).length;
  }

  /**
   * Compress `data` into one zstd frame at `level` (content size in the header), in a worker.
   * `data` is copied to the worker and the caller keeps it, unless `transfer`: then a `data` that
   * owns its whole ArrayBuffer is moved to the worker without a copy (detached here: the caller
   * must not touch it after this call; the copy cost ~0.4 s of the main thread per 100 MB of
   * body-heavy journal under load). A view of a larger buffer is copied once either way.
   *
   * @example const frame = await pool.compress(body, 19)
   */
  compress(data: Uint8Array, level: number, opts: { transfer?: boolean } = {}): Promise<Buffer> {
    return this.submit(data, level, opts.transfer === true, undefined) as Promise<Buffer>;
  }

  /**
   * `compress`, and the worker writes the frame to `file.path` (its shard directory made, temp +
   * rename with `writeFileNoSyncSync`'s rules, NO fsync: the caller makes it durable, e.g.
   * `syncBlobs`); resolves to the frame's size. The frame never comes back to this thread, and
   * the file system calls (each new inode costs ~1.5 ms of kernel CPU on this machine's ext4) run
   * on the workers. Errors are coded as in-thread: NOT_A_REGULAR_FILE, NO_SPACE, IO_ERROR, …
   *
   * @example const stored = await pool.compressToFile(body, 9, { path, tmp, shard })
   */
  compressToFile(data: Uint8Array, level: number, file: ZstdWorkerFile, opts: { transfer?: boolean } = {}): Promise<number> {
    return this.submit(data, level, opts.transfer === true, file) as Promise<number>;
  }

  private submit(data: Uint8Array, level: number, transferOwn: boolean, file: ZstdWorkerFile | undefined): Promise<Buffer | number> {
    if (this.closed) return Promise.reject(new Error("ZstdPool is closed"));
    try {
      assertZstdNative(); // the workers load the same binding
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<Buffer | number>((resolve, reject) => {
      // A view of a larger buffer would be cloned whole: send exactly its bytes.
      // (`new Uint8Array(view)` copies; `Buffer#slice` would not.)
      const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : new Uint8Array(data);
      // Our own copy is always moved; the caller's buffer only when it says so.
      const transfer = (own !== data || transferOwn) && !(own.buffer instanceof SharedArrayBuffer);
      this.queue.push({ id: this.nextId++, data: own, level, transfer, file, resolve, reject });
      this.dispatch();
    });
  }

  private spawn(): Slot {
    const worker = startWorker(new URL("./zstd.worker.js", import.meta.url), { execArgv: [] });
    const slot: Slot = { worker, job: null };
    worker.on("message", (m: ZstdWorkerReply) => {
      const job = slot.job;
      slot.job = null;
      if (job && job.id === m.id) {
        if (m.out) job.resolve(Buffer.from(m.out.buffer, m.out.byteOffset, m.out.byteLength));
        else if (m.stored !== undefined) job.resolve(m.stored);
        else job.reject(replyError(m, job.file?.path));
      }
      this.dispatch();
    });
    worker.on("error", (e) => this.fail(slot, e));
    worker.on("exit", (code) => {
      if (!this.closed) this.fail(slot, new Error(`zstd worker exited with code ${code}`));
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private fail(slot: Slot, e: Error): void {
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const job = slot.job;
    job?.reject(job.file === undefined ? e : workerError(e, job.file.path));
    slot.job = null;
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.job === null);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) break;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      const request: ZstdWorkerRequest = { id: job.id, data: job.data, level: job.level, ...(job.file ? { file: job.file } : {}) };
      slot.worker.postMessage(request, job.transfer ? [job.data.buffer as ArrayBuffer] : []);
    }
    for (const s of this.slots) if (s.job === null) s.worker.unref();
  }

  /** Terminate the workers (pending jobs are rejected). */
  async close(): Promise<void> {
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new Error("ZstdPool closed"));
    await Promise.all(this.slots.splice(0).map((s) => {
      s.job?.reject(new Error("ZstdPool closed"));
      return s.worker.terminate();
    }));
  }
}
