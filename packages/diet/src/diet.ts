/**
 * The diet (format §5): `planDiet` (read-only: what would move, expected sizes) and `applyDiet`
 * (the crash-safe sequence). Both run the same streaming pass (`scanForDiet`) over the journal.
 *
 * Order of `applyDiet`: claim the lock → check the last run → sweep stale temps → CAS blobs
 * (tmp + rename, then one batch of fsyncs of every referenced blob and its shard: syncBlobs) → `events.jsonl.zst.tmp` and `journal.meta.json.tmp` (fsync) → verify
 * the temps FROM DISK → re-check events.jsonl unchanged and the lock still ours → rename both →
 * fsync the directory → delete events.jsonl and events.meta.json → fsync. A crash at any point
 * leaves the intact original or a complete verified diet.
 */
import { closeSync, fstatSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { JournalError, resolveExec, type ExecLayout, type ExecRef } from "@hankweave-journal/core";
import { availableParallelism } from "node:os";
import {
  JOURNAL_ZSTD_LEVEL, OneFrameWriter, SeekableWriter, ZstdPool, putBlob, sweepCasTemps, syncBlobs,
} from "@hankweave-journal/cas";
import {
  assertRegularFile, assertTempUsable, claimLockForOfflineTool, createTemp, errnoOf, fsyncDir, ioError, journalPresence,
  openRegularForRead, openRegularSync, readSidecarStatus,
} from "@hankweave-journal/journal";
import { DEFAULT_DIET_KIND, kindOfManifest, manifestFieldsOf, type DietKind } from "./diet-kind.js";
import { scanForDiet, type DietScanResult } from "./diet-scan.js";
import { serializeManifest, type DietManifest } from "./manifest.js";
import { lastRunStatus, type LastRunStatus } from "./run-status.js";
import { StepVerifier, checkManifestOnDisk, verifyDiet } from "./verify-diet.js";
import { DietedSource } from "./dieted-source.js";
import { findPointers } from "./rehydrate.js";
import { applyExtDiet, extAlreadyDieted, isExtDiet, planExtDiet } from "./ext/ext-diet.js";
import { publishPair, rmQuiet } from "./publish-diet.js";

/** At most this many individual moves are listed in a plan (the counts are always complete). */
export const PLAN_MAX_MOVES = 1000;
/** CAS blobs in flight at once (level 19 in a worker pool, one per core, plus one queued each). */
const BLOB_IN_FLIGHT = 16;

/** Crash-test hook: called between steps with a step name (and a counter for repeated steps). */
export type DietHook = (step: string, n: number) => void | Promise<void>;

export interface DietOptions {
  /**
   * What to write (diet-kind.ts): `compatible` (default: dietVersion 1, one zstd frame, read by
   * every reference runtime), `seekable` (dietVersion 1, independent frames + a seek table: read
   * by the reference runtime on Node >= 24 and Bun, NOT on Node 22, whose `node:zlib` decodes the
   * first frame only) or `extended` (dietVersion 2, unreadable by the reference runtime).
   */
  kind?: DietKind;
  /** Diet even when the last run did not end completed/failed (never overrides the lock). */
  force?: boolean;
  now?: () => number;
  hook?: DietHook;
  /** Input bytes per pointer frame (default FRAME_TARGET_BYTES; small values are for tests). */
  frameTargetBytes?: number;
  /** zstd level of the CAS blobs (default CAS_ZSTD_LEVEL; the reference runtime reads any level). */
  casLevel?: number;
}

/**
 * Unique body bytes compressed in the calling thread before the blob pool's worker threads start
 * (starting the two costs ~0.1 CPU-s; level 9 compresses 512 KiB here in ~10–20 ms).
 */
export const POOL_MIN_BODY_BYTES = 512 * 1024;

/** libzstd threads compressing the one-frame pointer journal (one per core, at most 2). */
export const JOURNAL_ZSTD_WORKERS = Math.max(1, Math.min(2, availableParallelism()));
/**
 * Journals below this size compress their one frame and their CAS blobs in the calling thread:
 * libzstd's threads and their job buffers (several MiB at level 3), and the blob pool's worker
 * threads (~0.1–0.2 s to start each, seconds from the TypeScript sources under load), cost more
 * than they save on a few MiB.
 */
export const JOURNAL_ZSTD_MT_MIN_BYTES = 8 * 1024 * 1024;

/** One body the plan would move. */
export interface PlannedMove {
  line: number;
  key: string;
  sha256: string;
  bytes: number;
  firstSeen: boolean;
}

/** What a diet would do (`--dry-run`). */
export interface DietPlan {
  exec: string;
  kind: DietKind;
  dietVersion: 1 | 2;
  lastRun: LastRunStatus;
  runCheck: "ok" | "forced" | "refused";
  originalBytes: number;
  originalSha256: string;
  lines: number;
  frames: number;
  bodies: { moved: number; unique: number; movedBytes: number; uniqueBytes: number };
  /** Uncompressed size of the pointer journal. */
  expectedPointerBytes: number;
  moves: PlannedMove[];
  movesTruncated: boolean;
}

/** What `applyDiet` did. */
export interface DietResult {
  exec: string;
  status: "dieted" | "already-dieted";
  /** The kind written (or, already dieted, found: from the manifest). */
  kind: DietKind;
  dietVersion: 1 | 2;
  originalSha256: string;
  originalBytes: number;
  totalEvents: number;
  stored: { pointerJournalBytes: number; manifestBytes: number; casBytes: number; totalBytes: number };
  bodies: { moved: number; unique: number; written: number; reused: number };
  verified: true;
}

function runOk(s: LastRunStatus): boolean {
  return s === "completed" || s === "failed";
}

function refuseRun(layout: ExecLayout, s: LastRunStatus): JournalError {
  return new JournalError("RUN_NOT_FINISHED", `the last run of ${layout.exec} is ${s === "none" ? "absent" : s}, not completed or failed`, {
    path: layout.journal,
    actual: s,
    expected: ["completed", "failed"],
  }, { hint: "let the run finish, or pass --force to diet anyway (the lock is still required)" });
}

async function requirePlain(layout: ExecLayout): Promise<void> {
  const exec = layout.exec;
  const presence = await journalPresence(layout);
  if (presence.kind === "half") {
    throw new JournalError("HALF_PAIR", `only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair exists`, { path: layout.eventsDir });
  }
  if (presence.kind === "none") {
    throw new JournalError(presence.execExists ? "JOURNAL_NOT_FOUND" : "EXEC_NOT_FOUND", `no journal in ${exec}`, { path: layout.eventsDir });
  }
  if (presence.kind === "dieted") {
    throw new JournalError("ALREADY_DIETED", `${exec} is already dieted`, { path: layout.dietedJournal });
  }
}

/**
 * Plan a diet without writing anything or taking the lock.
 *
 * @example const plan = await planDiet("/runs/x"); plan.bodies.moved
 */
export async function planDiet(exec: ExecRef, opts: DietOptions = {}): Promise<DietPlan> {
  const layout = resolveExec(exec);
  const kind = opts.kind ?? DEFAULT_DIET_KIND;
  if (kind === "extended") return planExtDiet(layout, opts);
  await requirePlain(layout);
  const fh = await openRegularForRead(layout.journal);
  try {
    const size = (await fh.stat()).size;
    const lastRun = await lastRunStatus(fh, size);
    const moves: PlannedMove[] = [];
    const scan = await scanForDiet(fh, { kind, countEvents: false, frameTargetBytes: opts.frameTargetBytes }, {
      body: (b, line, firstSeen) => {
        if (moves.length < PLAN_MAX_MOVES) moves.push({ line, key: b.key, sha256: b.sha256, bytes: b.bytes, firstSeen });
      },
    });
    return {
      exec: layout.exec,
      kind,
      dietVersion: manifestFieldsOf(kind).dietVersion,
      lastRun,
      runCheck: runOk(lastRun) ? "ok" : opts.force ? "forced" : "refused",
      originalBytes: scan.originalBytes,
      originalSha256: scan.originalSha256,
      lines: scan.lines,
      // zstd frames the pointer journal will have (the index's blocks are not frames unless seekable).
      frames: kind === "seekable" ? scan.frames.length : 1,
      bodies: { moved: scan.moved, unique: scan.uniqueBodies, movedBytes: scan.movedBytes, uniqueBytes: scan.uniqueBodyBytes },
      expectedPointerBytes: scan.pointerBytes,
      moves,
      movesTruncated: scan.moved > moves.length,
    };
  } finally {
    await fh.close();
  }
}

/** Sizes of the published pair plus the blobs it references. */
async function storedSizes(layout: ExecLayout, shas: Iterable<string>, zst: number, manifest: number): Promise<DietResult["stored"]> {
  let cas = 0;
  for (const sha of shas) cas += (await fsp.stat(layout.casBlob(sha)).catch(() => ({ size: 0 }))).size;
  return { pointerJournalBytes: zst, manifestBytes: manifest, casBytes: cas, totalBytes: zst + manifest + cas };
}

/**
 * Diet `exec` in place (see the module comment for the order of operations).
 *
 * Guarantees: refuses LOCK_HELD/LOCK_INVALID (a live or unreadable lock), RUN_NOT_FINISHED
 * (unless `force`), HALF_PAIR, NOT_A_REGULAR_FILE; deletes events.jsonl only after the pair was
 * verified from disk and published; an already dieted directory is re-verified (`already-dieted`).
 *
 * @example const r = await applyDiet("/runs/x"); r.stored.totalBytes
 */
export async function applyDiet(exec: ExecRef, opts: DietOptions = {}): Promise<DietResult> {
  const layout = resolveExec(exec);
  const kind = opts.kind ?? DEFAULT_DIET_KIND;
  if (kind === "extended") return applyExtDiet(layout, opts);
  const hook: DietHook = opts.hook ?? (() => undefined);
  const presence = await journalPresence(layout);
  if (presence.kind === "dieted") return alreadyDieted(layout);
  await requirePlain(layout);
  const lock = await claimLockForOfflineTool(layout, { now: opts.now });
  let fh: import("node:fs/promises").FileHandle | undefined;
  let published = false;
  try {
    fh = await openRegularForRead(layout.journal);
    const before = await fh.stat();
    const lastRun = await lastRunStatus(fh, before.size);
    if (!runOk(lastRun) && !opts.force) throw refuseRun(layout, lastRun);
    const sidecar = await readSidecarStatus(layout, before.size);
    const trusted = sidecar.status === "ok" ? sidecar.sidecar : undefined;
    // Refuse up front what would fail after the pair is published and events.jsonl deleted (a
    // directory at events.meta.json) or half-way (a directory at a temp name): a diet either
    // succeeds or leaves the directory as it found it (durable-file.ts).
    await assertRegularFile(layout.sidecar);
    await assertTempUsable(layout.dietedJournalTmp);
    await assertTempUsable(layout.manifestTmp);
    await hook("start", 0);

    await rmQuiet(layout.dietedJournalTmp);
    await rmQuiet(layout.manifestTmp);
    await sweepCasTemps(layout);
    await hook("swept", 0);

    const referenced = new Set<string>();
    const blobs = { written: 0, reused: 0 };
    // The size of every referenced blob on disk, as putBlob wrote or found it (no stat per blob
    // after the publish: 847 at 100 MB body-heavy, ~0.1 s).
    let casBytes = 0;
    const inFlight = new Set<Promise<void>>();
    let blobError: unknown;
    const zfh = await createTemp(layout.dietedJournalTmp);
    // Small journals compress their few blobs in this thread (the same frames, tested): starting
    // the pool's worker threads costs more than it saves below JOURNAL_ZSTD_MT_MIN_BYTES.
    const pool = before.size >= JOURNAL_ZSTD_MT_MIN_BYTES ? new ZstdPool() : undefined;
    // The pool's threads start only once the bodies are worth them: the first
    // POOL_MIN_BODY_BYTES of unique bodies compress here (a real-shaped v2 journal has a handful).
    let handedBytes = 0;
    // Past that, a worker compresses the blob and writes it itself (temp + rename, synced in the
    // batch below): the frame does not come back, the file system calls run on the workers.
    // The body is not used after it is handed over (the verification reads the blob back): moved, not copied.
    const writeVia = pool === undefined ? undefined : (data: Buffer, level: number, file: { path: string; tmp: string; shard: string }): Promise<number> | undefined => {
      handedBytes += data.length;
      return handedBytes <= POOL_MIN_BODY_BYTES ? undefined : pool.compressToFile(data, level, file, { transfer: true });
    };
    const seekable = kind === "seekable";
    let scan: DietScanResult;
    let zstBytes: number;
    let blobsDurable: Promise<void> = Promise.resolve();
    // The one-frame journal is verified while it is written (StepVerifier: decoded back from the
    // temp behind the writer, rehydrated from the blobs on disk); the seekable one after (verifyDiet).
    const scanFrames: DietScanResult["frames"] = [];
    let stepVerifier: StepVerifier | undefined;
    let readFd: number | undefined;
    try {
      const writer = seekable ? new SeekableWriter(zfh, JOURNAL_ZSTD_LEVEL, 2) : new OneFrameWriter(zfh, JOURNAL_ZSTD_LEVEL, before.size >= JOURNAL_ZSTD_MT_MIN_BYTES ? JOURNAL_ZSTD_WORKERS : 0);
      if (writer instanceof OneFrameWriter) {
        // The temp is open write-only: the follower reads it back through a descriptor of its own (same inode).
        readFd = openRegularSync(layout.dietedJournalTmp);
        if (fstatSync(readFd).ino !== (await zfh.stat()).ino) throw new JournalError("JOURNAL_CHANGED", `${layout.dietedJournalTmp} was replaced while the diet wrote it`, { path: layout.dietedJournalTmp });
        stepVerifier = new StepVerifier(layout, scanFrames, readFd, layout.dietedJournalTmp, () => Promise.all([...inFlight]));
        stepVerifier.attach(writer);
      }
      let frames = 0;
      scan = await scanForDiet(fh, { kind, countEvents: trusted === undefined, frameTargetBytes: opts.frameTargetBytes, frames: scanFrames }, {
        body: async (b, _line, firstSeen) => {
          if (!firstSeen) return;
          referenced.add(b.sha256);
          // Deferred: no fsync per blob; syncBlobs makes every referenced blob durable before the publish.
          const p: Promise<void> = putBlob(layout, b.body, b.sha256, { writeVia, level: opts.casLevel, durability: "deferred" }).then(
            async (r) => {
              if (r.outcome === "reused") blobs.reused++;
              else blobs.written++;
              casBytes += r.storedBytes;
              await hook("blob", blobs.written + blobs.reused);
            },
            (e) => {
              blobError ??= e;
            },
          ).finally(() => inFlight.delete(p));
          inFlight.add(p);
          while (inFlight.size >= BLOB_IN_FLIGHT) await Promise.race(inFlight);
          if (blobError) throw blobError;
        },
        original: (chunk) => stepVerifier?.original(chunk),
        reuseChunk: () => stepVerifier?.reuseChunk(),
        ...(writer instanceof SeekableWriter
          ? {
              frame: async (data: Buffer) => {
                stepVerifier?.check();
                await writer.addFrame(data);
                await hook("frame", ++frames);
              },
            }
          : {
              // The streaming compressor copies each piece: the frame is never concatenated.
              framePieces: async (pieces: Buffer[]) => {
                stepVerifier?.check();
                for (const piece of pieces) await writer.write(piece);
                await hook("frame", ++frames);
              },
            }),
      });
      await Promise.all(inFlight);
      if (blobError) throw blobError;
      // The blobs' fsyncs (one batch) overlap the rest of the compression and the verification.
      blobsDurable = syncBlobs(layout, referenced);
      blobsDurable.catch(() => undefined);
      zstBytes = (await writer.finish()).bytes;
      const synced = zfh.sync();
      synced.catch(() => undefined);
      if (stepVerifier !== undefined) {
        try {
          await stepVerifier.finish(zstBytes, { bytes: scan.originalBytes }, layout.dietedJournalTmp);
        } catch (e) {
          throw verifyFailed(layout, e);
        }
      }
      await synced;
    } finally {
      await stepVerifier?.settle();
      if (readFd !== undefined) closeSync(readFd);
      await zfh.close();
      await pool?.close();
    }
    await hook("zst-written", 0);

    const manifest: DietManifest = {
      schemaVersion: 1,
      dietVersion: manifestFieldsOf(kind).dietVersion,
      // Only when the sidecar had one (format §5.1): a journal without a sidecar gets none.
      eventSchemaVersion: trusted?.eventSchemaVersion ?? (sidecar.status === "stale" ? sidecar.sidecar.eventSchemaVersion : undefined),
      totalEvents: trusted?.totalEvents ?? scan.totalEvents ?? 0,
      originalSha256: scan.originalSha256,
      originalBytes: scan.originalBytes,
      segments: [{ id: 0, events: trusted?.totalEvents ?? scan.totalEvents ?? 0 }],
      dietedAt: new Date((opts.now ?? Date.now)()).toISOString(),
      lines: scan.lines,
      endsWithNewline: scan.endsWithNewline,
      bodies: { moved: scan.moved, unique: scan.uniqueBodies, movedBytes: scan.movedBytes },
      frames: scan.frames,
      framing: manifestFieldsOf(kind).framing,
    };
    const manifestText = Buffer.from(serializeManifest(manifest), "utf8");
    const mfh = await createTemp(layout.manifestTmp);
    try {
      await mfh.writeFile(manifestText);
      await mfh.sync();
    } finally {
      await mfh.close();
    }
    await fsyncDir(layout.eventsDir);
    await hook("tmp-written", 0);

    // Verify from disk: the one-frame journal was (above, in step); the manifest is read back.
    // The seekable one goes through the same code path readers and restore use.
    try {
      if (stepVerifier !== undefined) await checkManifestOnDisk(layout, layout.manifestTmp, manifestText);
      else await verifyDiet(layout, { zst: layout.dietedJournalTmp, manifest: layout.manifestTmp });
    } catch (e) {
      throw verifyFailed(layout, e);
    }
    await blobsDurable;
    await hook("verified", 0);

    await publishPair(layout, before, lock, hook, {
      published: () => { published = true; },
      closeJournal: async () => { await fh?.close(); fh = undefined; },
    });
    return {
      exec: layout.exec,
      status: "dieted",
      kind,
      dietVersion: manifest.dietVersion,
      originalSha256: scan.originalSha256,
      originalBytes: scan.originalBytes,
      totalEvents: manifest.totalEvents,
      stored: { pointerJournalBytes: zstBytes, manifestBytes: manifestText.length, casBytes, totalBytes: zstBytes + manifestText.length + casBytes },
      bodies: { moved: scan.moved, unique: scan.uniqueBodies, written: blobs.written, reused: blobs.reused },
      verified: true,
    };
  } catch (e) {
    // An OS error (a full disk, a read-only mount) is coded: NO_SPACE, READ_ONLY, …
    throw errnoOf(e) !== undefined ? ioError(e, layout.eventsDir) : e;
  } finally {
    await fh?.close();
    if (!published) {
      await rmQuiet(layout.dietedJournalTmp);
      await rmQuiet(layout.manifestTmp);
    }
    await lock.release();
  }
}

function verifyFailed(layout: ExecLayout, e: unknown): JournalError {
  return new JournalError("DIET_VERIFY_FAILED", `the written diet did not verify: ${(e as Error).message}`, {
    path: layout.dietedJournalTmp,
  }, { cause: e });
}

/** The idempotent path: re-verify an existing diet and report it. */
async function alreadyDieted(layout: ExecLayout): Promise<DietResult> {
  if (isExtDiet(layout)) return extAlreadyDieted(layout);
  const v = await verifyDiet(layout);
  const shas = new Set<string>();
  const src = await DietedSource.open(layout, v.manifest);
  try {
    for await (const l of src.pointerLines()) {
      if (l.rewritten) for (const p of l.spans ?? findPointers(l.pointer.toString("latin1"))) shas.add(p.sha256);
    }
  } finally {
    await src.close();
  }
  return {
    exec: layout.exec,
    status: "already-dieted",
    kind: kindOfManifest(v.manifest),
    dietVersion: v.manifest.dietVersion,
    originalSha256: v.originalSha256,
    originalBytes: v.originalBytes,
    totalEvents: v.manifest.totalEvents,
    stored: await storedSizes(layout, shas, v.pointerJournalBytes, v.manifestBytes),
    bodies: { moved: v.manifest.bodies?.moved ?? 0, unique: shas.size, written: 0, reused: 0 },
    verified: true,
  };
}
