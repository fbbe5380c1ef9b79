/**
 * A worker thread of the restore's fast path (`restore-pipeline.ts`): rebuilds the original bytes
 * of its blocks of frames of our pointer journal (seekable: frames read with pread; one-frame:
 * the whole stream, in order) and transfers them to the caller in output buffers. Started by
 * `startWorker(new URL("./restore.worker.js", import.meta.url))`.
 *
 * Protocol: `workerData` is a `RestoreWorkerData`; the worker posts `RestoreWorkerMessage`s —
 * `{k, buf, len, last}` per output buffer of frame k (`buf` transferred; `last` on the frame's
 * final one), or `{k, bufs, parts, last}` for a frame as pieces of two buffers (transferred,
 * returned together), then `{k: frames.length, done, bodiesRead}` (for a one-frame journal only
 * once the stream was checked to end there), or `{k, fallback}` when a check failed (the caller
 * rebuilds frame k and after in its own thread). Buffers come back through `back` (one, or an
 * array); `signal[0]` counts returns, `signal[1]` is stop.
 *
 * Only the happy path runs here: a frame's bytes leave the worker only after all its checks passed.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { createHash } from "node:crypto";
import { isUtf8 } from "node:buffer";
import { isSha256Hex, layoutOf } from "@hankweave-journal/core";
import { OneFrameReader, zstdNapi } from "@hankweave-journal/cas";
import { jsonEscapeInto, jsonEscapedLength } from "./json-escape.js";
import { JSON_ESCAPE_WASM_BASE64, tryCreateWasmEscaper } from "./json-escape-wasm.js";
import { POINTER_RE } from "./rehydrate.js";
import type { FrameIndexEntry } from "./manifest.js";

/** What the caller passes as `workerData`. */
export interface RestoreWorkerData {
  /** Descriptor of the pointer journal (shared with the caller; read with pread). */
  fd: number;
  /**
   * Our one-frame pointer journal of this many bytes (the manifest's blocks, decoded as one stream
   * in order by the only worker), or null for the seekable one (frames at `offsets`).
   */
  oneFrameBytes: number | null;
  offsets: number[];
  compressed: number[];
  decompressed: number[];
  frames: FrameIndexEntry[];
  /** The execution directory (CAS paths come from its layout). */
  exec: string;
  slots: number;
  slotBytes: number;
  bodyMax: number;
  /** Bodies up to this size are escaped in WebAssembly (when available), larger ones in JavaScript. */
  wasmMax: number;
  cacheBytes: number;
  signal: SharedArrayBuffer;
  back: MessagePort;
  first: number;
  step: number;
  block: number;
}

/** What the worker posts. */
export interface RestoreWorkerMessage {
  k: number;
  buf?: ArrayBuffer | null;
  len?: number;
  /** A frame as pieces of these buffers (transferred): `parts` is [buffer index, start, end, …] in file order. */
  bufs?: ArrayBuffer[];
  parts?: number[];
  last?: boolean;
  done?: boolean;
  bodiesRead?: number;
  fallback?: string;
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

class Fallback extends Error {}
const STOPPED = new Error("stopped");

/** Reused input and output buffers, grown to the largest frame or body seen. */
class Region {
  private buf: Buffer | null = null;
  ensure(n: number): Buffer {
    if (this.buf === null || this.buf.length < n) this.buf = Buffer.allocUnsafeSlow(Math.max(n, 64 * 1024));
    return this.buf;
  }
}

interface CacheEntry {
  sha: string;
  start: number;
  len: number;
  frame: number;
}

interface Span {
  start: number;
  end: number;
  key: Buffer;
  sha: string;
  bytes: number;
}

interface RewrittenLine {
  start: number;
  end: number;
  originalLength: number;
  spans: Span[];
}

function runWorker(port: NonNullable<typeof parentPort>, w: RestoreWorkerData): void {
  const dctx = new (zstdNapi().DCtx)();
  // Without WebAssembly (node --jitless) every body goes to the JavaScript escaper.
  const wasmEscaper = tryCreateWasmEscaper(JSON_ESCAPE_WASM_BASE64);
  const wasmMax = wasmEscaper === null ? -1 : w.wasmMax;
  const pointerRe = new RegExp(POINTER_RE.source, "g");
  const cas = layoutOf(w.exec);
  // Output buffers: at most w.slots of w.slotBytes each, transferred to the caller with their frame
  // bytes and transferred back through w.back once written.
  const signal = new Int32Array(w.signal);
  const free: ArrayBuffer[] = [];
  let allocated = 0;
  let out: Uint8Array | null = null;
  let fill = 0;
  const frames = w.frames;
  const keys = new Map<string, Buffer>();
  let k = -1;

  // libzstd decodes into exactly the expected size: more output is an error, less is caught by the count.
  const decode = (dst: Uint8Array, src: Uint8Array, n: number, what: string): void => {
    let got = -1;
    try {
      got = dctx.decompress(dst, src);
    } catch {
      throw new Fallback(what);
    }
    if (got !== n) throw new Fallback(what);
  };
  const frameIn = new Region();
  const frameOut = new Region();
  const bodyIn = new Region();
  const bodyOut = new Region();

  const acquire = (): Uint8Array => {
    for (;;) {
      if (Atomics.load(signal, 1) !== 0) throw STOPPED;
      const seen = Atomics.load(signal, 0);
      for (let m = receiveMessageOnPort(w.back); m !== undefined; m = receiveMessageOnPort(w.back)) {
        if (Array.isArray(m.message)) free.push(...(m.message as ArrayBuffer[]));
        else free.push(m.message as ArrayBuffer);
      }
      const back = free.pop();
      if (back !== undefined) return new Uint8Array(back);
      if (allocated < w.slots) {
        allocated++;
        return new Uint8Array(w.slotBytes);
      }
      Atomics.wait(signal, 0, seen, 200);
    }
  };
  const post = (last: boolean): void => {
    if (fill === 0 || out === null) {
      port.postMessage({ k, buf: null, len: 0, last } satisfies RestoreWorkerMessage);
      return;
    }
    const buf = out.buffer as ArrayBuffer;
    port.postMessage({ k, buf, len: fill, last } satisfies RestoreWorkerMessage, [buf]);
    out = null;
    fill = 0;
  };
  const emit = (src: Uint8Array, from: number, to: number): void => {
    while (from < to) {
      if (out === null) out = acquire();
      const n = Math.min(to - from, w.slotBytes - fill);
      out.set(src.subarray(from, from + n), fill);
      fill += n;
      from += n;
      if (fill === w.slotBytes) post(false);
    }
  };

  // Escaped bodies live in one arena used as a ring, oldest first out (bodies repeat close together:
  // FIFO keeps as many repeats as an LRU did). No allocation per body: a Buffer per body left tens of
  // MB of dead external memory per worker between collections. An entry used by the frame being
  // built is never overwritten; a body that would need that gets its own buffer.
  const arena = Buffer.allocUnsafeSlow(w.cacheBytes);
  const cache = new Map<string, CacheEntry>();
  const order: (CacheEntry | undefined)[] = [];
  let orderHead = 0;
  let arenaAt = 0;
  let bodiesRead = 0;
  const evictFront = (): void => {
    const e = order[orderHead]!;
    order[orderHead++] = undefined;
    if (orderHead > 1024 && orderHead * 2 > order.length) {
      order.splice(0, orderHead);
      orderHead = 0;
    }
    if (cache.get(e.sha) === e) cache.delete(e.sha);
  };
  const place = (len: number): CacheEntry | null => {
    if (len > w.cacheBytes / 4) return null;
    if (arenaAt + len > w.cacheBytes) {
      while (orderHead < order.length && order[orderHead]!.start >= arenaAt) {
        if (order[orderHead]!.frame === k) return null;
        evictFront();
      }
      arenaAt = 0;
    }
    while (orderHead < order.length && order[orderHead]!.start < arenaAt + len && order[orderHead]!.start >= arenaAt) {
      if (order[orderHead]!.frame === k) return null;
      evictFront();
    }
    const e: CacheEntry = { sha: "", start: arenaAt, len, frame: k };
    arenaAt += len;
    return e;
  };
  const body = (sha: string, bytes: number): Uint8Array => {
    const hit = cache.get(sha);
    if (hit !== undefined) {
      hit.frame = k;
      return arena.subarray(hit.start, hit.start + hit.len);
    }
    if (bytes > w.bodyMax) throw new Fallback("large body");
    bodiesRead++;
    let fd = -1;
    let size = 0;
    let src: Buffer;
    try {
      fd = openSync(cas.casBlob(sha), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
      const st = fstatSync(fd);
      if (!st.isFile() || st.size === 0) throw new Fallback("body unreadable");
      size = st.size;
      src = bodyIn.ensure(size);
      for (let done = 0; done < size; ) {
        const r = readSync(fd, src, done, size - done, done);
        if (r === 0) throw new Fallback("body unreadable");
        done += r;
      }
    } catch {
      throw new Fallback("body unreadable");
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    // Bodies up to wasmMax are decoded straight into the WebAssembly escaper's memory and escaped
    // there (SIMD); larger ones by the JavaScript escaper.
    const inWasm = wasmEscaper !== null && bytes <= wasmMax;
    const view = inWasm ? wasmEscaper.input(bytes) : bodyOut.ensure(bytes).subarray(0, bytes);
    decode(view, src.subarray(0, size), bytes, "body decode");
    if (createHash("sha256").update(view).digest("hex") !== sha) throw new Fallback("body hash");
    if (!isUtf8(view)) throw new Fallback("body not UTF-8");
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
  };
  const keyBytes = (key: string): Buffer => {
    let b = keys.get(key);
    if (b === undefined) {
      b = Buffer.from('"' + key + '":', "latin1");
      keys.set(key, b);
    }
    return b;
  };

  // The one-frame journal: one stream decoder, every block in order (any decoder error is a fallback).
  const stream = w.oneFrameBytes === null ? null : new OneFrameReader(w.fd, w.oneFrameBytes);
  /** Decode frame (or block) k's `d` pointer bytes into `dst`. */
  const decodeFrame = (dst: Uint8Array, d: number): void => {
    if (stream !== null) {
      stream.readInto(dst);
      return;
    }
    const c = w.compressed[k];
    const src = frameIn.ensure(c);
    for (let done = 0; done < c; ) {
      const r = readSync(w.fd, src, done, c - done, w.offsets[k] + done);
      if (r === 0) throw new Fallback("short read");
      done += r;
    }
    decode(dst, src.subarray(0, c), d, "frame decode");
  };

  const frame = (): void => {
    const f = frames[k];
    const d = stream !== null ? f.pointerBytes! : w.decompressed[k];
    const rw = f.rewritten;
    if (rw.length === 0 && d > 0 && d <= w.slotBytes) {
      // Nothing to splice: decoded straight into an output buffer (every frame starts a new one;
      // an empty frame takes the path below, which posts no buffer).
      const slot = acquire();
      out = slot;
      decodeFrame(slot.subarray(0, d), d);
      fill = d;
      post(true);
      return;
    }
    // A frame with rewritten lines that fits an output buffer is decoded into one and goes out
    // as is, its bodies gathered into a second one: the caller writes the pieces of both in order
    // (no copy of the pointer bytes). Otherwise everything is copied into output buffers.
    const whole = rw.length > 0 && d <= w.slotBytes ? acquire() : null;
    const data = whole !== null ? Buffer.from(whole.buffer, whole.byteOffset, d) : frameOut.ensure(d).subarray(0, d);
    decodeFrame(data, d);
    if (rw.length === 0) {
      emit(data, 0, d);
      post(true);
      return;
    }
    // The rewritten lines, walked and checked against the index as DietedSource.frameLines does.
    const lines: RewrittenLine[] = [];
    let r = 0;
    let from = 0;
    let offset = f.originalOffset;
    for (let i = 0; i < f.lines; i++) {
      const nl = data.indexOf(10, from);
      const end = nl < 0 ? d : nl;
      if (nl < 0 && (i !== f.lines - 1 || k !== frames.length - 1)) throw new Fallback("line count");
      const rewritten = r < rw.length && rw[r] === i;
      const originalLength = rewritten ? rw[r + 1] : end - from;
      if (rewritten) r += 2;
      if (rewritten) lines.push({ start: from, end, originalLength, spans: [] });
      offset += originalLength + (nl >= 0 ? 1 : 0);
      from = end + 1;
    }
    if (from < d || offset !== f.originalOffset + f.originalBytes) throw new Fallback("frame bytes");
    const wanted = new Map<string, number>();
    for (const l of lines) {
      const text = data.toString("latin1", l.start, l.end);
      pointerRe.lastIndex = 0;
      for (let m = pointerRe.exec(text); m !== null; m = pointerRe.exec(text)) {
        const bytes = Number(m[3]);
        if (!isSha256Hex(m[2]) || !Number.isSafeInteger(bytes)) throw new Fallback("bad pointer");
        l.spans.push({ start: l.start + m.index, end: l.start + m.index + m[0].length, key: keyBytes(m[1]), sha: m[2], bytes });
        wanted.set(m[2], bytes);
      }
      if (l.spans.length === 0) throw new Fallback("no pointer");
    }
    const bodies = new Map<string, Uint8Array>();
    for (const [sha, bytes] of wanted) bodies.set(sha, body(sha, bytes));
    for (const l of lines) {
      let length = l.end - l.start;
      for (const s of l.spans) length += s.key.length + bodies.get(s.sha)!.length - (s.end - s.start);
      if (length !== l.originalLength) throw new Fallback("line length");
    }
    // Every check passed: emit.
    if (whole !== null) {
      let need = 0;
      for (const b of bodies.values()) need += b.length;
      for (const l of lines) for (const s of l.spans) need += s.key.length;
      if (need <= w.slotBytes) {
        postPieces(whole, data, lines, bodies);
        return;
      }
    }
    let run = 0;
    for (const l of lines) {
      for (const s of l.spans) {
        emit(data, run, s.start);
        emit(s.key, 0, s.key.length);
        const b = bodies.get(s.sha)!;
        emit(b, 0, b.length);
        run = s.end;
      }
    }
    emit(data, run, d);
    post(true);
    if (whole !== null) free.push(whole.buffer as ArrayBuffer);
  };

  /**
   * Post frame k as pieces of two output buffers: `whole` (its decoded pointer bytes, `data`) and
   * one holding the keys and the escaped bodies of its rewritten lines (`{k, bufs, parts, last}`).
   */
  const postPieces = (whole: Uint8Array, data: Buffer, lines: RewrittenLine[], bodies: Map<string, Uint8Array>): void => {
    const spliced = acquire();
    const at = new Map<string, number>();
    let fillTo = 0;
    for (const [sha, b] of bodies) {
      spliced.set(b, fillTo);
      at.set(sha, fillTo);
      fillTo += b.length;
    }
    // [buffer (0: pointer bytes, 1: keys and bodies), start, end, …] in file order.
    const parts: number[] = [];
    let run = 0;
    for (const l of lines) {
      for (const s of l.spans) {
        if (s.start > run) parts.push(0, run, s.start);
        spliced.set(s.key, fillTo);
        const b = at.get(s.sha)!;
        parts.push(1, fillTo, fillTo + s.key.length, 1, b, b + bodies.get(s.sha)!.length);
        fillTo += s.key.length;
        run = s.end;
      }
    }
    if (data.length > run) parts.push(0, run, data.length);
    const bufs = [whole.buffer as ArrayBuffer, spliced.buffer as ArrayBuffer];
    port.postMessage({ k, bufs, parts, last: true } satisfies RestoreWorkerMessage, bufs);
  };

  try {
    for (let start = w.first * w.block; start < frames.length; start += w.step * w.block) {
      for (k = start; k < start + w.block && k < frames.length; k++) {
        if (Atomics.load(signal, 1) !== 0) return;
        frame();
      }
    }
    // The stream ends with the last block: a complete frame, nothing after it.
    stream?.end();
    port.postMessage({ k: frames.length, done: true, bodiesRead } satisfies RestoreWorkerMessage);
  } catch (e) {
    if (e === STOPPED) return;
    port.postMessage({ k, fallback: e instanceof Fallback ? e.message : String((e as Error)?.message ?? e) } satisfies RestoreWorkerMessage);
  }
}

if (parentPort !== null) runWorker(parentPort, workerData as RestoreWorkerData);
