// The plain journal: streaming reader, writer, sidecar, torn-tail repair, runtime.lock (format §2–3).
export { openPlainReader, eventsFromRawLines, recordOfLine, typeFilter, tornTailFinding, ANCHOR_EVERY_LINES } from "./plain-reader.js";
export { openJournalWriter, MAX_BATCH_LINES, MAX_BATCH_BYTES } from "./writer.js";
export type { AppendedEvent, WriterOptions, JournalWriter, WriterOpenReport, NewEvent } from "./writer.js";
export { buildLine, makeEventId } from "./envelope.js";
export type { IdSource } from "./envelope.js";
export { sniffEventType, sniffPrefixType, sniffTypeSpan, typeSniffer, parseEventLine, isBlankLine, envelopeProblem } from "./line-parse.js";
export type { LineParse } from "./line-parse.js";
export type { TypeFilter } from "./plain-reader.js";
export {
  scanRawLines, scanRawLineBatches, countNewlines, READ_CHUNK_BYTES, chunkLines, chunksFromStream, chunksFromLines, fileByteRead, iterableByteRead,
} from "./line-scanner.js";
export type { ByteRead, ChunkLinesOptions } from "./line-scanner.js";
export type { ScanStart, NewlineCount } from "./line-scanner.js";
export {
  readSidecarStatus, writeSidecar, parseSidecar, serializeSidecar,
  SIDECAR_EVERY_EVENTS, SIDECAR_SCHEMA_VERSION, EVENT_SCHEMA_VERSION,
} from "./sidecar.js";
export type { Sidecar, SidecarStatus } from "./sidecar.js";
export { planRepair, applyRepair, PLAN_MAX_FINDINGS } from "./repair.js";
export type { RepairPlan, RepairResult, PlanRepairOptions } from "./repair.js";
export {
  acquireLock, inspectLock, claimLockForOfflineTool, parseLock, judgeLock, sweepStaleLockTemps, LOCK_HEARTBEAT_MS, LOCK_STALE_AFTER_MS,
} from "./lock.js";
export type { LockInfo, LockInspection, LockHandle, AcquireOptions } from "./lock.js";
export { journalPresence, journalPresenceSync, openRegularForRead, openRegularSync, requireRegularFile } from "./fs-checks.js";
export {
  DEFAULT_DURABILITY, resolveDurability, syncsUnder, ioError, workerError, errnoOf, lstatOrUndefined, notRegular, assertRegularFile, openNoFollow,
  createTemp, assertTempUsable, fsyncDir, fsyncFile, removeQuietly, publishTemp, writeFileDurable, writeFileNoSyncSync, copyFileNoFollow, sweepTemps,
} from "./durable-file.js";
export type { Durability, DurableWriteOptions } from "./durable-file.js";
export type { JournalPresence } from "./fs-checks.js";
export { checkOutputPath, isInsideHankweave, STDOUT_PATH } from "./output-path.js";
export type { OutputTarget } from "./output-path.js";
