export { sha256Hex, createSha256 } from "./sha.js";
export type { Sha256Stream } from "./sha.js";
// The durable-file primitives live in @hankweave-journal/journal (durable-file.ts, the one module);
// re-exported here for the diet's imports until they import the journal package directly.
export { fsyncDir, lstatOrUndefined, assertRegularFile, ioError } from "@hankweave-journal/journal";
export { inspectZstd, decompressedBoundOf, isSkippableMagic, ZSTD_FRAME_MAGIC } from "./zstd-frames.js";
export type { ZstdFrameInfo } from "./zstd-frames.js";
export {
  compressZstd, decompressZstd, CAS_ZSTD_LEVEL, JOURNAL_ZSTD_LEVEL, decompressLimitFor,
} from "./zstd.js";
export {
  encodeSeekTable, parseSeekTable, readSeekTable, readSeekTableSync, SeekableWriter, writeAll, readExactly, readExactlySync,
  SEEKABLE_SKIPPABLE_MAGIC, SEEKABLE_FOOTER_MAGIC,
} from "./seekable.js";
export type { SeekEntry, SeekTable } from "./seekable.js";
export { putBlob, syncBlobs, readBlob, sweepCasTemps, listBlobs, CAS_MAX_BODY_BYTES } from "./blob-store.js";
export type { PutBlobResult } from "./blob-store.js";
export { compressOneShot, assertZstdNative, zstdNapi, ZSTD_NATIVE_BINDING } from "./zstd-native.js";
export type { ZstdNapiBinding } from "./zstd-native.js";
export { ZstdPool, ZSTD_POOL_MAX_WORKERS } from "./zstd-pool.js";
export { startWorker, workerEntryOf } from "./worker-start.js";
export type { WorkerEntry } from "./worker-start.js";
export { OneFrameWriter, OneFrameReader, OneFrameFollower, frameHeaderOf, withContentSize } from "./one-frame.js";
