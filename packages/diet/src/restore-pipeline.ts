/**
 * The restore's fast path: worker threads rebuild the original bytes of our seekable pointer
 * journal frame by frame (blocks of RESTORE_BLOCK_FRAMES frames in turn), while the calling thread only hashes and
 * writes. Each worker reads its frames with `pread` into a reused buffer and decodes them with
 * libzstd (`zstd-napi`'s `ZSTD_decompressDCtx`, into exactly the indexed size; a frame without
 * rewritten lines straight into an output buffer), reads and verifies the CAS bodies of the
 * rewritten lines (SHA-256, decode of exactly the pointer's size, straight into the memory of the
 * WebAssembly escaper) and escapes them there (the byte-level JavaScript escaper above 8 MiB or
 * without WebAssembly), then copies the finished bytes into one of a few output buffers that it
 * transfers to the caller (no copy), which transfers each back once it was hashed and written.
 * (Not a SharedArrayBuffer ring: V8 copies into shared memory with a relaxed-atomic memmove,
 * measured at ~0.7 s of CPU per GB against ~0.1 s for a plain copy.)
 *
 * Only the happy path runs there. A frame whose checks fail in a worker — a short read, a decode
 * error, a line count or length that disagrees with the manifest, a bad pointer, a missing,
 * corrupt or non-UTF-8 body — is never emitted (a frame's bytes leave the worker only after all
 * of its checks passed); the workers stop and the frame and all after it are rebuilt by
 * `DietedSource.originalParts`, which throws the stable error code (or yields the same bytes).
 * The whole-file SHA-256 check of the caller stays the final word either way.
 */
import { availableParallelism } from "node:os";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";
import { ZSTD_NATIVE_BINDING, assertZstdNative } from "@hankweave-journal/cas";
import type { DietedSource } from "./dieted-source.js";
import { JSON_ESCAPE_SOURCE } from "./json-escape.js";
import { JSON_ESCAPE_WASM_BASE64, WASM_ESCAPE_MAX_BYTES, WASM_ESCAPE_SOURCE } from "./json-escape-wasm.js";
import { POINTER_RE } from "./rehydrate.js";
import { BODY_CACHE_BYTES } from "./body-cache.js";

/** Bytes of one output buffer (a frame's output takes one buffer or more; every frame starts a new one). */
export const RING_SLOT_BYTES = 4 * 1024 * 1024;
/** Output buffers per worker. */
export const RING_SLOTS = 4;
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

/** Worker threads for a journal of `bytes` original bytes on `cores` cores. */
export function restoreWorkersFor(bytes: number, cores: number): number {
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
}

const WORKER_SOURCE = `
"use strict";
const { parentPort, workerData: w, receiveMessageOnPort } = require("node:worker_threads");
const { readSync, openSync, fstatSync, closeSync, constants: { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } } = require("node:fs");
const { createHash } = require("node:crypto");
const { isUtf8 } = require("node:buffer");
const zstd = require(w.lib);
const dctx = new zstd.DCtx();
${JSON_ESCAPE_SOURCE}
${WASM_ESCAPE_SOURCE}
// Without WebAssembly (node --jitless) every body goes to the JavaScript escaper.
const wasmEscaper = tryCreateWasmEscaper(w.escapeWasm);
const wasmMax = wasmEscaper === null ? -1 : w.wasmMax;
const POINTER_RE = new RegExp(w.pointerRe, "g");
const SHA_RE = /^[0-9a-f]{64}$/;
const FALLBACK = new Error("fallback");
const STOPPED = new Error("stopped");
// Output buffers: at most w.slots of w.slotBytes each, transferred to the caller with their frame
// bytes and transferred back through w.back once written (signal[0] counts returns, signal[1] is stop).
const signal = new Int32Array(w.signal);
const free = [];
let allocated = 0;
let out = null;
let fill = 0;
const frames = w.frames;
const keys = new Map();
let k = -1;
let why = "";
function fallback(reason) { why = reason; return FALLBACK; }

// Reused input and output buffers, grown to the largest frame or body seen.
class Region {
  constructor() { this.buf = null; }
  ensure(n) {
    if (this.buf === null || this.buf.length < n) this.buf = Buffer.allocUnsafeSlow(Math.max(n, 64 * 1024));
    return this.buf;
  }
}
// libzstd decodes into exactly the expected size: more output is an error, less is caught by the count.
function decode(dst, src, n, what) {
  let got = -1;
  try { got = dctx.decompress(dst, src); } catch { throw fallback(what); }
  if (got !== n) throw fallback(what);
}
const frameIn = new Region(), frameOut = new Region(), bodyIn = new Region(), bodyOut = new Region();

function acquire() {
  for (;;) {
    if (Atomics.load(signal, 1) !== 0) throw STOPPED;
    const seen = Atomics.load(signal, 0);
    for (let m = receiveMessageOnPort(w.back); m !== undefined; m = receiveMessageOnPort(w.back)) free.push(m.message);
    if (free.length > 0) return new Uint8Array(free.pop());
    if (allocated < w.slots) { allocated++; return new Uint8Array(w.slotBytes); }
    Atomics.wait(signal, 0, seen, 200);
  }
}
function post(last) {
  if (fill === 0) { parentPort.postMessage({ k, buf: null, len: 0, last }); return; }
  parentPort.postMessage({ k, buf: out.buffer, len: fill, last }, [out.buffer]);
  out = null;
  fill = 0;
}
function emit(src, from, to) {
  while (from < to) {
    if (out === null) out = acquire();
    const n = Math.min(to - from, w.slotBytes - fill);
    out.set(src.subarray(from, from + n), fill);
    fill += n;
    from += n;
    if (fill === w.slotBytes) post(false);
  }
}

// Escaped bodies live in one arena used as a ring, oldest first out (bodies repeat close together:
// FIFO keeps as many repeats as an LRU did). No allocation per body: a Buffer per body left tens of
// MB of dead external memory per worker between collections. An entry used by the frame being
// built is never overwritten; a body that would need that gets its own buffer.
const arena = Buffer.allocUnsafeSlow(w.cacheBytes);
const cache = new Map();
const order = [];
let orderHead = 0;
let arenaAt = 0;
let bodiesRead = 0;
function evictFront() {
  const e = order[orderHead];
  order[orderHead++] = undefined;
  if (orderHead > 1024 && orderHead * 2 > order.length) { order.splice(0, orderHead); orderHead = 0; }
  if (cache.get(e.sha) === e) cache.delete(e.sha);
}
function place(len) {
  if (len > w.cacheBytes / 4) return null;
  if (arenaAt + len > w.cacheBytes) {
    while (orderHead < order.length && order[orderHead].start >= arenaAt) {
      if (order[orderHead].frame === k) return null;
      evictFront();
    }
    arenaAt = 0;
  }
  while (orderHead < order.length && order[orderHead].start < arenaAt + len && order[orderHead].start >= arenaAt) {
    if (order[orderHead].frame === k) return null;
    evictFront();
  }
  const e = { sha: "", start: arenaAt, len, frame: k };
  arenaAt += len;
  return e;
}
function body(sha, bytes) {
  const hit = cache.get(sha);
  if (hit !== undefined) {
    hit.frame = k;
    return arena.subarray(hit.start, hit.start + hit.len);
  }
  if (bytes > w.bodyMax) throw fallback("large body");
  bodiesRead++;
  const path = w.casDir + "/" + sha.slice(0, 2) + "/" + sha + ".zst";
  let fd = -1, size = 0, src = null;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size === 0) throw FALLBACK;
    size = st.size;
    src = bodyIn.ensure(size);
    for (let done = 0; done < size;) {
      const r = readSync(fd, src, done, size - done, done);
      if (r === 0) throw FALLBACK;
      done += r;
    }
  } catch {
    throw fallback("body unreadable");
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  // Bodies up to w.wasmMax are decoded straight into the WebAssembly escaper's memory and escaped
  // there (SIMD); larger ones by the JavaScript escaper.
  const inWasm = bytes <= wasmMax;
  const view = inWasm ? wasmEscaper.input(bytes) : bodyOut.ensure(bytes).subarray(0, bytes);
  decode(view, src.subarray(0, size), bytes, "body decode");
  if (createHash("sha256").update(view).digest("hex") !== sha) throw fallback("body hash");
  if (!isUtf8(view)) throw fallback("body not UTF-8");
  const escaped = inWasm ? wasmEscaper.escape(bytes) : null;
  const len = escaped !== null ? escaped.length : jsonEscapedLength(view, 0, bytes);
  const e = place(len);
  if (e === null) {
    const own = Buffer.allocUnsafeSlow(len);
    if (escaped !== null) own.set(escaped);
    else jsonEscapeInto(view, 0, bytes, own, 0);
    return own;
  }
  if (escaped !== null) arena.set(escaped, e.start);
  else jsonEscapeInto(view, 0, bytes, arena, e.start);
  e.sha = sha;
  cache.set(sha, e);
  order.push(e);
  return arena.subarray(e.start, e.start + len);
}
function keyBytes(key) {
  let b = keys.get(key);
  if (b === undefined) { b = Buffer.from('"' + key + '":', "latin1"); keys.set(key, b); }
  return b;
}

function frame() {
  const f = frames[k];
  const c = w.compressed[k], d = w.decompressed[k];
  const src = frameIn.ensure(c);
  for (let done = 0; done < c;) {
    const r = readSync(w.fd, src, done, c - done, w.offsets[k] + done);
    if (r === 0) throw fallback("short read");
    done += r;
  }
  const rw = f.rewritten;
  if (rw.length === 0 && d > 0 && d <= w.slotBytes) {
    // Nothing to splice: decoded straight into an output buffer (every frame starts a new one;
    // an empty frame takes the path below, which posts no buffer).
    out = acquire();
    decode(out.subarray(0, d), src.subarray(0, c), d, "frame decode");
    fill = d;
    post(true);
    return;
  }
  const data = frameOut.ensure(d).subarray(0, d);
  decode(data, src.subarray(0, c), d, "frame decode");
  if (rw.length === 0) {
    emit(data, 0, d);
    post(true);
    return;
  }
  // The rewritten lines, walked and checked against the index as DietedSource.frameLines does.
  const lines = [];
  let r = 0, from = 0, offset = f.originalOffset;
  for (let i = 0; i < f.lines; i++) {
    const nl = data.indexOf(10, from);
    const end = nl < 0 ? d : nl;
    if (nl < 0 && (i !== f.lines - 1 || k !== frames.length - 1)) throw fallback("line count");
    const rewritten = r < rw.length && rw[r] === i;
    const originalLength = rewritten ? rw[r + 1] : end - from;
    if (rewritten) r += 2;
    if (rewritten) lines.push({ start: from, end, originalLength, spans: null });
    offset += originalLength + (nl >= 0 ? 1 : 0);
    from = end + 1;
  }
  if (from < d || offset !== f.originalOffset + f.originalBytes) throw fallback("frame bytes");
  const wanted = new Map();
  for (const l of lines) {
    const text = data.toString("latin1", l.start, l.end);
    const spans = [];
    POINTER_RE.lastIndex = 0;
    for (let m = POINTER_RE.exec(text); m !== null; m = POINTER_RE.exec(text)) {
      const bytes = Number(m[3]);
      if (!SHA_RE.test(m[2]) || !Number.isSafeInteger(bytes)) throw fallback("bad pointer");
      spans.push({ start: l.start + m.index, end: l.start + m.index + m[0].length, key: keyBytes(m[1]), sha: m[2], bytes });
      wanted.set(m[2], bytes);
    }
    if (spans.length === 0) throw fallback("no pointer");
    l.spans = spans;
  }
  const bodies = new Map();
  for (const [sha, bytes] of wanted) bodies.set(sha, body(sha, bytes));
  for (const l of lines) {
    let length = l.end - l.start;
    for (const s of l.spans) length += s.key.length + bodies.get(s.sha).length - (s.end - s.start);
    if (length !== l.originalLength) throw fallback("line length");
  }
  // Every check passed: emit.
  let run = 0;
  for (const l of lines) {
    for (const s of l.spans) {
      emit(data, run, s.start);
      emit(s.key, 0, s.key.length);
      const b = bodies.get(s.sha);
      emit(b, 0, b.length);
      run = s.end;
    }
  }
  emit(data, run, d);
  post(true);
}

(function run() {
  try {
    for (let start = w.first * w.block; start < frames.length; start += w.step * w.block) {
      for (k = start; k < start + w.block && k < frames.length; k++) {
        if (Atomics.load(signal, 1) !== 0) return;
        frame();
      }
    }
    parentPort.postMessage({ k: frames.length, done: true, bodiesRead });
  } catch (e) {
    if (e === STOPPED) return;
    parentPort.postMessage({ k, fallback: e === FALLBACK ? why : String((e && e.message) || e) });
  }
})();
`;

interface WorkerMessage {
  k: number;
  buf?: ArrayBuffer | null;
  len?: number;
  last?: boolean;
  done?: boolean;
  bodiesRead?: number;
  fallback?: string;
}

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
  workers: number = restoreWorkersFor(src.manifest.originalBytes, availableParallelism()),
  stats?: PipelineStats,
  sizes: PipelineSizes = {},
): AsyncGenerator<OriginalPiece> {
  const table = src.seekTable;
  const frames = src.manifest.frames;
  if (stats) Object.assign(stats, { workers: 0, fastFrames: 0, fallbackFrom: null, fallbackReason: null, bodiesRead: 0 });
  let from = 0;
  if (workers >= 1 && table !== null && frames !== undefined && frames.length > 0) {
    // The workers walk every frame's rewritten list: check them all first (MANIFEST_INVALID).
    for (let k = 0; k < frames.length; k++) src.checkFrame(k);
    const n = Math.min(workers, Math.ceil(frames.length / RESTORE_BLOCK_FRAMES));
    if (stats) stats.workers = n;
    const lanes = startLanes(src, n, sizes);
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
      if (from === frames.length && stats) {
        for (const lane of lanes) stats.bodiesRead += (await next(lane)).bodiesRead ?? 0;
      }
    } finally {
      await stopLanes(lanes);
    }
  }
  if (frames !== undefined && from >= frames.length && table !== null) return;
  for await (const parts of src.originalParts(from)) yield { parts, release: null };
}

function startLanes(src: DietedSource, n: number, sizes: PipelineSizes): Lane[] {
  assertZstdNative(); // the workers load the same binding
  const table = src.seekTable!;
  const frames = src.manifest.frames!;
  const shared = {
    fd: src.descriptor,
    offsets: table.offsets,
    compressed: table.entries.map((e) => e.compressedSize),
    decompressed: table.entries.map((e) => e.decompressedSize),
    frames,
    casDir: src.layout.casDir,
    lib: ZSTD_NATIVE_BINDING,
    pointerRe: POINTER_RE.source,
    slots: RING_SLOTS,
    slotBytes: sizes.slotBytes ?? RING_SLOT_BYTES,
    bodyMax: WORKER_BODY_MAX_BYTES,
    escapeWasm: JSON_ESCAPE_WASM_BASE64,
    wasmMax: Math.min(sizes.wasmEscapeMaxBytes ?? WASM_ESCAPE_MAX_BYTES, WASM_ESCAPE_MAX_BYTES),
    cacheBytes: sizes.bodyCacheBytes ?? BODY_CACHE_BYTES,
  };
  const lanes: Lane[] = [];
  for (let i = 0; i < n; i++) {
    const signal = new SharedArrayBuffer(8);
    const { port1: back, port2: workerBack } = new MessageChannel();
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // A plain CommonJS script: no inherited loader hooks (under tsx they cost each worker ~0.3 s of CPU to start).
      execArgv: [],
      workerData: { ...shared, signal, back: workerBack, first: i, step: n, block: RESTORE_BLOCK_FRAMES },
      transferList: [workerBack],
    });
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
