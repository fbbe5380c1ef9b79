/**
 * The worker thread of `ZstdPool`: compresses each request with `compressFrameSync` (the same
 * one-shot `ZSTD_compressCCtx` as `compressOneShot`, so the frames are byte-identical) and
 * transfers the frame back — or, when the request names a file (the diet's CAS blobs), writes the
 * frame there itself (its shard made, temp + rename through `writeFileNoSyncSync`, no fsync: the
 * caller syncs every blob in one batch) and answers with its size only. Started by
 * `startWorker(new URL("./zstd.worker.js", import.meta.url))`.
 */
import { mkdirSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import { writeFileNoSyncSync } from "@hankweave-journal/journal";
import { compressFrameSync } from "./zstd-native.js";

/** Where a frame is written by the worker: `path` through `tmp`, in the directory `shard`. */
export interface ZstdWorkerFile {
  path: string;
  tmp: string;
  shard: string;
}

/** A compression job: `data` into one frame at `level` (written to `file` when given). */
export interface ZstdWorkerRequest {
  id: number;
  data: Uint8Array;
  level: number;
  file?: ZstdWorkerFile;
}

/**
 * The frame of job `id` (`out`), the size of the frame it wrote (`stored`), or the message and
 * code (a JournalError's code or an errno) of the error that stopped it.
 */
export type ZstdWorkerReply =
  | { id: number; out: Uint8Array; stored?: undefined; error?: undefined }
  | { id: number; out?: undefined; stored: number; error?: undefined }
  | { id: number; out?: undefined; stored?: undefined; error: string; code?: string };

const port = parentPort;
if (port !== null) {
  port.on("message", ({ id, data, level, file }: ZstdWorkerRequest) => {
    let reply: ZstdWorkerReply;
    try {
      const frame = compressFrameSync(data, level);
      if (file === undefined) {
        reply = { id, out: frame };
      } else {
        mkdirSync(file.shard, { recursive: true });
        writeFileNoSyncSync(file.path, frame, { tmp: file.tmp });
        reply = { id, stored: frame.length };
      }
    } catch (e) {
      const code = (e as { code?: unknown } | null)?.code;
      reply = { id, error: String((e as Error)?.message ?? e), ...(typeof code === "string" ? { code } : {}) };
    }
    port.postMessage(reply, reply.out ? [reply.out.buffer as ArrayBuffer] : []);
  });
}
