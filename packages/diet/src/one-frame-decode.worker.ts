/**
 * The one-frame restore's decoder thread: decodes our one-frame pointer journal (format §5.1)
 * block by block with libzstd's streaming decoder (`OneFrameReader`) into a few reused buffers
 * that it transfers to the caller (no copy), which transfers each back once it was hashed and
 * written. Started by `startWorker(new URL("./one-frame-decode.worker.js", import.meta.url))`.
 *
 * Protocol: `workerData` is a `OneFrameDecodeData`; the worker posts `{k, buf, len}` for block
 * k in order, then `{done: true}` once the stream was checked to end there; on any error it
 * posts `{fallback, k}` and stops (the caller rebuilds from block k in its own thread, which
 * throws the stable error code). Buffers come back as bare `ArrayBuffer` messages.
 */
import { parentPort, workerData } from "node:worker_threads";
import { OneFrameReader } from "@hankweave-journal/cas";

/** What the caller passes as `workerData`. */
export interface OneFrameDecodeData {
  fd: number;
  fileSize: number;
  path: string;
  /** Decompressed (pointer) bytes of each block, in order. */
  sizes: number[];
  /** Buffers in flight at most. */
  slots: number;
  /** Bytes of each buffer (≥ every block). */
  slotBytes: number;
}

/** A message of the worker. */
export interface OneFrameDecodeMessage {
  k: number;
  buf?: ArrayBuffer;
  len?: number;
  done?: boolean;
  fallback?: string;
}

const data = workerData as OneFrameDecodeData;
const port = parentPort!;
const reader = new OneFrameReader(data.fd, data.fileSize, data.path);
const free: ArrayBuffer[] = [];
let inFlight = 0;
let k = 0;
let finished = false;

function pump(): void {
  if (finished) return;
  try {
    while (k < data.sizes.length && inFlight < data.slots) {
      const len = data.sizes[k];
      const buf = free.pop() ?? new ArrayBuffer(data.slotBytes);
      reader.readInto(new Uint8Array(buf, 0, len));
      inFlight++;
      port.postMessage({ k, buf, len } satisfies OneFrameDecodeMessage, [buf]);
      k++;
    }
    if (k === data.sizes.length) {
      finished = true;
      reader.end();
      port.postMessage({ k, done: true } satisfies OneFrameDecodeMessage);
    }
  } catch (e) {
    finished = true;
    port.postMessage({ k, fallback: (e as Error).message } satisfies OneFrameDecodeMessage);
  }
}

port.on("message", (buf: ArrayBuffer) => {
  free.push(buf);
  inFlight--;
  pump();
});
pump();
