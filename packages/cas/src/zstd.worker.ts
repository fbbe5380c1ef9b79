/**
 * The worker thread of `ZstdPool`: compresses each request with `compressFrameSync` (the same
 * one-shot `ZSTD_compressCCtx` as `compressOneShot`, so the frames are byte-identical) and
 * transfers the frame back. Started by `startWorker(new URL("./zstd.worker.js", import.meta.url))`.
 */
import { parentPort } from "node:worker_threads";
import { compressFrameSync } from "./zstd-native.js";

/** A compression job: `data` into one frame at `level`. */
export interface ZstdWorkerRequest {
  id: number;
  data: Uint8Array;
  level: number;
}

/** The frame of job `id`, or the message of the error that stopped it. */
export type ZstdWorkerReply = { id: number; out: Uint8Array; error?: undefined } | { id: number; out?: undefined; error: string };

const port = parentPort;
if (port !== null) {
  port.on("message", ({ id, data, level }: ZstdWorkerRequest) => {
    let reply: ZstdWorkerReply;
    try {
      reply = { id, out: compressFrameSync(data, level) };
    } catch (e) {
      reply = { id, error: String((e as Error)?.message ?? e) };
    }
    port.postMessage(reply, reply.out ? [reply.out.buffer as ArrayBuffer] : []);
  });
}
