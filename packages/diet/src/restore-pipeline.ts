/**
 * The restore's fast path: worker threads rebuild the original bytes of our pointer journal frame
 * by frame, while the calling thread only hashes and writes. The seekable journal's frames are
 * dealt to the workers in blocks of RESTORE_BLOCK_FRAMES and read with `pread` into a reused
 * buffer; the one-frame journal (the compatible default) is one stream, decoded block by block by
 * ONE worker (`OneFrameReader`, then checked to end with the last block). Frames are decoded with
 * libzstd (`zstd-napi`, into exactly the indexed size) straight into an output buffer, one of a
 * few that the worker transfers to the caller (no copy), which transfers each back once it was
 * hashed and written. The worker reads and verifies the CAS bodies of the rewritten lines (SHA-256,
 * decode of exactly the pointer's size, straight into the memory of the WebAssembly escaper) and
 * escapes them there (the byte-level JavaScript escaper above 8 MiB or without WebAssembly), then
 * gathers the frame's keys and bodies into a second output buffer: the frame goes out as pieces of
 * the two, in file order. A frame or its bodies larger than an output buffer is copied into output
 * buffers instead. (Not a SharedArrayBuffer ring: V8 copies into shared memory with a
 * relaxed-atomic memmove, measured at ~0.7 s of CPU per GB against ~0.1 s for a plain copy.)
 *
 * Only the happy path runs there. A frame whose checks fail in a worker — a short read, a decode
 * error, a line count or length that disagrees with the manifest, a bad pointer, a missing,
 * corrupt or non-UTF-8 body — is never emitted (a frame's bytes leave the worker only after all
 * of its checks passed); the workers stop and the frame and all after it are rebuilt by
 * `DietedSource.originalParts`, which throws the stable error code (or yields the same bytes).
 * The whole-file SHA-256 check of the caller stays the final word either way.
 */
import { availableParallelism } from "node:os";
import { MessageChannel, type MessagePort, type Worker } from "node:worker_threads";
import { JournalError } from "@hankweave-journal/core";
import { assertZstdNative, startWorker } from "@hankweave-journal/cas";
import type { DietedSource } from "./dieted-source.js";
import { WASM_ESCAPE_MAX_BYTES } from "./json-escape-wasm.js";
import { BODY_CACHE_BYTES } from "./body-cache.js";
import type { RestoreWorkerData, RestoreWorkerMessage } from "./restore.worker.js";

/** Bytes of one output buffer (a frame's output takes one buffer or more; every frame starts a new one). */
export const RING_SLOT_BYTES = 4 * 1024 * 1024;
/** Output buffers per worker (a frame with bodies holds two until written). */
export const RING_SLOTS = 6;
/** Consecutive frames given to one worker (bodies repeat close together: a block shares one body cache). */
export const RESTORE_BLOCK_FRAMES = 4;
/** Bodies larger than this are left to the in-thread path (a worker's decode buffer keeps its peak). */
const WORKER_BODY_MAX_BYTES = 256 * 1024 * 1024;

/** Journals from this size on are rebuilt by one worker thread (below, starting it costs more than it saves). */
export const RESTORE_WORKERS_MIN_BYTES = 16 * 1024 * 1024;
/**
 * Journals from this size on get one worker per core (at most RESTORE_MAX_WORKERS). Below it a
 * second worker costs more CPU than the second core gives back: at 100 MB (native decoder, three
 * alternated rounds) 0, 1 and 2 workers all took 0.59–0.76 s, two with ~0.15 s more CPU and
 * ~40 MB more RSS; one worker has the lowest RSS (~100 MB against ~118 MB in-thread).
 */
export const RESTORE_ALL_WORKERS_MIN_BYTES = 256 * 1024 * 1024;
/** Worker threads of the fast path at most (the caller's thread hashes, and writes when it restores). */
export const RESTORE_MAX_WORKERS = 2;

/**
 * One-frame journals from this size on are rebuilt by their (one) worker; below it in this thread.
 * Bundled, in-op, 3 alternated pairs at load 6-7 (session 12): at 100 MB the worker cost 0.04-0.06
 * CPU-s more (its start) and 25-45 % more wall (real 228-335 -> 322-482 ms, body-heavy 343-1108 ->
 * 443-1269 ms; on a quieter machine, load 3.3, it saved 5-10 %); at 1 GB it saved wall and CPU
 * (body-heavy 3.99-4.59 -> 3.54-3.61 s, 3.1-3.5 -> 2.8 CPU-s).
 */
export const RESTORE_ONE_FRAME_WORKER_MIN_BYTES = 256 * 1024 * 1024;

/** Worker threads for a journal of `bytes` original bytes on `cores` cores (`oneFrame`: our one-frame journal, one stream). */
export function restoreWorkersFor(bytes: number, cores: number, oneFrame = false): number {
  if (oneFrame) return bytes < RESTORE_ONE_FRAME_WORKER_MIN_BYTES ? 0 : 1;
  if (bytes < RESTORE_WORKERS_MIN_BYTES) return 0;
  return bytes < RESTORE_ALL_WORKERS_MIN_BYTES ? 1 : Math.max(1, Math.min(RESTORE_MAX_WORKERS, cores));
}

/** One piece of the original file, in order. `release` gives its ring slot back (call it once written). */
export interface OriginalPiece {
  parts: Buffer[];
  release: (() => void) | null;
}

/** Buffer sizes of the fast path (tests shrink them to reach every branch with small journals). */
export interface PipelineSizes {
  /** Bytes of one output buffer (default RING_SLOT_BYTES). */
  slotBytes?: number;
  /** Bytes of each worker's escaped-body arena (default BODY_CACHE_BYTES). */
  bodyCacheBytes?: number;
  /** Bodies up to this size are escaped in WebAssembly, larger ones in JavaScript (default WASM_ESCAPE_MAX_BYTES). */
  wasmEscapeMaxBytes?: number;
}

/** What the fast path did (for tests and measurements). */
export interface PipelineStats {
  workers: number;
  /** Frames rebuilt by the workers. */
  fastFrames: number;
  /** First frame left to the in-thread path (null when the workers did all). */
  fallbackFrom: number | null;
  fallbackReason: string | null;
  /** CAS bodies read (and verified) by the workers. */
  bodiesRead: number;
  /** Frames with rewritten lines that came as pieces of two buffers (their pointer bytes not copied). */
  pieceFrames: number;
}

type WorkerMessage = RestoreWorkerMessage;

interface Lane {
  worker: Worker;
  back: MessagePort;
  signal: Int32Array;
  queue: WorkerMessage[];
  wake: (() => void) | null;
}

/**
 * Original bytes of `src` as ring-slot views (the fast path, with `workers` threads; by default
 * `restoreWorkersFor` its size — restore and verify share this policy) or, for a source the
 * workers cannot take (foreign `.zst`, `workers` < 1), as `originalParts()`. Yields in
 * file order; the frames after a worker's fallback come from `originalParts(k)`.
 */
export async function* originalPieces(
  src: DietedSource,
  workers: number = restoreWorkersFor(src.manifest.originalBytes, availableParallelism(), src.oneFrame),
  stats?: PipelineStats,
  sizes: PipelineSizes = {},
): AsyncGenerator<OriginalPiece> {
  const table = src.seekTable;
  const frames = src.manifest.frames;
  if (stats) Object.assign(stats, { workers: 0, fastFrames: 0, fallbackFrom: null, fallbackReason: null, bodiesRead: 0, pieceFrames: 0 });
  let from = 0;
  /** Every worker said done after the last frame (false: the in-thread path checks the end). */
  let ended = false;
  // The one-frame journal is one stream: one worker decodes it all, block by block.
  const oneFrame = src.oneFrame;
  if (workers >= 1 && (table !== null || oneFrame) && frames !== undefined && frames.length > 0) {
    // The workers walk every frame's rewritten list: check them all first (MANIFEST_INVALID).
    for (let k = 0; k < frames.length; k++) src.checkFrame(k);
    const n = oneFrame ? 1 : Math.min(workers, Math.ceil(frames.length / RESTORE_BLOCK_FRAMES));
    if (stats) stats.workers = n;
    const lanes = startLanes(src, n, sizes);
    ended = true;
    try {
      from = frames.length;
      outer: for (let k = 0; k < frames.length; k++) {
        const lane = lanes[Math.floor(k / RESTORE_BLOCK_FRAMES) % n];
        for (;;) {
          const m = await next(lane);
          if (m.fallback !== undefined || m.done || m.k !== k) {
            from = k;
            if (stats) {
              stats.fallbackFrom = k;
              stats.fallbackReason = m.fallback ?? `worker message for frame ${m.k} while waiting for ${k}`;
            }
            break outer;
          }
          const bufs = m.bufs;
          if (bufs !== undefined) {
            const p = m.parts!;
            if (stats) stats.pieceFrames++;
            const views: Buffer[] = [];
            for (let i = 0; i < p.length; i += 3) views.push(Buffer.from(bufs[p[i]], p[i + 1], p[i + 2] - p[i + 1]));
            let released = false;
            yield {
              parts: views,
              release: () => {
                if (released) return;
                released = true;
                lane.back.postMessage(bufs, bufs);
                Atomics.add(lane.signal, 0, 1);
                Atomics.notify(lane.signal, 0);
              },
            };
          }
          const buf = m.buf;
          if (buf) {
            let released = false;
            yield {
              parts: [Buffer.from(buf, 0, m.len!)],
              release: () => {
                if (released) return;
                released = true;
                lane.back.postMessage(buf, [buf]);
                Atomics.add(lane.signal, 0, 1);
                Atomics.notify(lane.signal, 0);
              },
            };
          }
          if (m.last) break;
        }
        if (stats) stats.fastFrames++;
      }
      if (from === frames.length) {
        // Each worker's last word: done (a one-frame worker also checked that the stream ends
        // there), or a fallback, which hands the end check to the in-thread path.
        for (const lane of lanes) {
          const m = await next(lane);
          if (m.done !== true) {
            ended = false;
            if (stats) {
              stats.fallbackFrom = frames.length;
              stats.fallbackReason = m.fallback ?? `worker message for frame ${m.k} after the last frame`;
            }
          } else if (stats) stats.bodiesRead += m.bodiesRead ?? 0;
        }
      }
    } finally {
      await stopLanes(lanes);
    }
  }
  if (frames !== undefined && from >= frames.length && ended && (table !== null || oneFrame)) return;
  yield* src.originalBlocks(from);
}

function startLanes(src: DietedSource, n: number, sizes: PipelineSizes): Lane[] {
  assertZstdNative(); // the workers load the same binding
  const table = src.seekTable;
  const frames = src.manifest.frames!;
  const shared: Omit<RestoreWorkerData, "signal" | "back" | "first" | "step" | "block"> = {
    fd: src.descriptor,
    oneFrameBytes: table === null ? src.zstBytes : null,
    offsets: table?.offsets ?? [],
    compressed: table?.entries.map((e) => e.compressedSize) ?? [],
    decompressed: table?.entries.map((e) => e.decompressedSize) ?? [],
    frames,
    exec: src.layout.exec,
    slots: RING_SLOTS,
    slotBytes: sizes.slotBytes ?? RING_SLOT_BYTES,
    bodyMax: WORKER_BODY_MAX_BYTES,
    wasmMax: Math.min(sizes.wasmEscapeMaxBytes ?? WASM_ESCAPE_MAX_BYTES, WASM_ESCAPE_MAX_BYTES),
    cacheBytes: sizes.bodyCacheBytes ?? BODY_CACHE_BYTES,
  };
  const lanes: Lane[] = [];
  for (let i = 0; i < n; i++) {
    const signal = new SharedArrayBuffer(8);
    const { port1: back, port2: workerBack } = new MessageChannel();
    const workerData: RestoreWorkerData = { ...shared, signal, back: workerBack, first: i, step: n, block: RESTORE_BLOCK_FRAMES };
    let worker: Worker;
    try {
      // No inherited loader hooks: the built worker needs none, and from the sources startWorker registers tsx itself.
      worker = startWorker(new URL("./restore.worker.js", import.meta.url), { execArgv: [], workerData, transferList: [workerBack] });
    } catch (e) {
      void stopLanes(lanes);
      workerBack.close();
      back.close();
      throw new JournalError("WORKER_FAILED", `the restore worker could not start: ${(e as Error).message}`, { exec: src.layout.exec });
    }
    const lane: Lane = { worker, back, signal: new Int32Array(signal), queue: [], wake: null };
    const push = (m: WorkerMessage): void => {
      lane.queue.push(m);
      const wake = lane.wake;
      lane.wake = null;
      wake?.();
    };
    worker.on("message", push);
    worker.on("error", (e) => push({ k: -1, fallback: `worker error: ${e.message}` }));
    worker.on("exit", (code) => push({ k: -1, fallback: `worker exited (${code})` }));
    lanes.push(lane);
  }
  return lanes;
}

async function next(lane: Lane): Promise<WorkerMessage> {
  while (lane.queue.length === 0) await new Promise<void>((resolve) => (lane.wake = resolve));
  return lane.queue.shift()!;
}

async function stopLanes(lanes: Lane[]): Promise<void> {
  for (const l of lanes) {
    Atomics.store(l.signal, 1, 1);
    Atomics.notify(l.signal, 0);
  }
  await Promise.all(lanes.map((l) => l.worker.terminate()));
  for (const l of lanes) l.back.close();
}
