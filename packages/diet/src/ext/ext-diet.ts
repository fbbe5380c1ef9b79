/**
 * The extended diet (dietVersion 2, our own format: `docs/extended-diet.md`): the same crash-safe
 * sequence as the compatible diet (format §5.1), with the columnar container in place of the pointer
 * journal and no CAS:
 *
 * claim the lock → check the last run → remove stale temps → write `events.jsonl.zst.tmp` (the
 * container) and fsync → write `journal.meta.json.tmp` and fsync → fsync the directory → verify the
 * temps FROM DISK (rebuild every line, SHA-256 and size equal the original's) → re-check that
 * events.jsonl is unchanged and the lock still ours → rename the container, rename the manifest →
 * fsync the directory → delete events.jsonl and events.meta.json → fsync. A crash at any point
 * leaves the intact original or a complete verified diet.
 */
import * as fsp from "node:fs/promises";
import type { Stats } from "node:fs";
import { JournalError, resolveExec, type ExecLayout, type ExecRef } from "@hankweave-journal/core";
import { createSha256, fsyncDir } from "@hankweave-journal/cas";
import {
  assertRegularFile, assertTempUsable, claimLockForOfflineTool, createTemp, errnoOf, ioError, journalPresence,
  openRegularForRead, readSidecarStatus,
} from "@hankweave-journal/journal";
import { lastRunStatus, type LastRunStatus } from "../run-status.js";
import { manifestOf, readManifestJson, type DietManifest } from "../manifest.js";
import { manifestFieldsOf } from "../diet-kind.js";
import type { DietOptions, DietPlan, DietResult } from "../diet.js";
import type { DietVerification } from "../verify-diet.js";
import { FORMAT_VERSION, type ExtManifestInfo } from "./format.js";
import { ExtSource, extInfoOfJson, readExtInfo } from "./ext-source.js";
import { writeExtContainer, type ExtWriteResult } from "./ext-write.js";
import { DECODE_MAX_WORKERS, DECODE_WORKERS_MIN_BYTES, DecodeCrew, decodeBlocksInThread, decodeBlocksOnWorkers } from "./decode-pool.js";
import { publishPair, rmQuiet } from "../publish-diet.js";

/** Options of the extended diet beyond the common ones (tests use small blocks). */
export interface ExtDietOptions extends DietOptions {
  blockTargetBytes?: number;
  packFrameTargetBytes?: number;
  packWindowBytes?: number;
  workers?: number;
}

function runOk(s: LastRunStatus): boolean {
  return s === "completed" || s === "failed";
}

async function requirePlain(layout: ExecLayout): Promise<ExecLayout> {
  const exec = layout.exec;
  const presence = await journalPresence(layout);
  if (presence.kind === "half") {
    throw new JournalError("HALF_PAIR", `only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair exists`, { path: layout.eventsDir });
  }
  if (presence.kind === "none") {
    throw new JournalError(presence.execExists ? "JOURNAL_NOT_FOUND" : "EXEC_NOT_FOUND", `no journal in ${exec}`, { path: layout.eventsDir });
  }
  if (presence.kind === "dieted") throw new JournalError("ALREADY_DIETED", `${exec} is already dieted`, { path: layout.dietedJournal });
  return layout;
}

/** The manifest text: format §5.1's keys in order, then ours (`lines`, `endsWithNewline`, `ext`). */
export function serializeExtManifest(m: Omit<DietManifest, "frames" | "bodies">, ext: ExtManifestInfo): string {
  return JSON.stringify({
    schemaVersion: m.schemaVersion, dietVersion: m.dietVersion, eventSchemaVersion: m.eventSchemaVersion, totalEvents: m.totalEvents,
    originalSha256: m.originalSha256, originalBytes: m.originalBytes, segments: m.segments.map((s) => ({ id: s.id, events: s.events })),
    dietedAt: m.dietedAt, lines: m.lines, endsWithNewline: m.endsWithNewline, ext,
  });
}

function extInfoOf(w: ExtWriteResult): ExtManifestInfo {
  return {
    format: "hwx-columnar", version: FORMAT_VERSION, lines: w.lines, endsWithNewline: w.endsWithNewline, blocks: w.blocks,
    containerBytes: w.containerBytes, text: w.text,
  };
}

/** Is the dieted pair of `layout` (or the manifest at `manifestPath`) an extended diet of this format? */
export function isExtDiet(layout: ExecLayout, manifestPath: string = layout.manifest): boolean {
  return readExtInfo(manifestPath) !== null;
}

/**
 * Open the container of an extended diet after reading and checking its manifest. `json`: the
 * manifest at `paths.manifest` already read by `readManifestJson` (openReader read it to tell the
 * kind); without it the manifest is read here, once.
 */
export async function openExtSource(layout: ExecLayout, paths: { zst?: string; manifest?: string } = {}, json?: unknown): Promise<{ src: ExtSource; manifest: DietManifest; ext: ExtManifestInfo }> {
  const manifestPath = paths.manifest ?? layout.manifest;
  const read = json === undefined ? readManifestJson(manifestPath) : json;
  const manifest = manifestOf(read, manifestPath);
  const ext = extInfoOfJson(read);
  if (ext === null || manifest.dietVersion !== 2 || typeof ext.lines !== "number" || typeof ext.endsWithNewline !== "boolean") {
    throw new JournalError("MANIFEST_INVALID", "journal.meta.json is invalid: its ext key is malformed", { path: manifestPath });
  }
  const src = ExtSource.open(layout, { lines: ext.lines, originalBytes: manifest.originalBytes, endsWithNewline: ext.endsWithNewline }, paths.zst ?? layout.dietedJournal);
  return { src, manifest, ext };
}

/** How many decode workers restore and verify use for `originalBytes` (`workers`: the caller's choice, capped). */
function decodeWorkersFor(originalBytes: number, workers?: number): number {
  return Math.min(workers ?? (originalBytes >= DECODE_WORKERS_MIN_BYTES ? DECODE_MAX_WORKERS : 0), DECODE_MAX_WORKERS);
}

/**
 * The original bytes of an extended diet as chunks, with the restore pipeline's piece shape
 * (`release`, when not null, gives the chunk's buffer back to its decode worker: call it once the
 * bytes are no longer used; in this thread it frees the block's kept kernel region). `workers` threads decode the blocks
 * (default: DECODE_MAX_WORKERS from DECODE_WORKERS_MIN_BYTES, else none; 0: in this thread),
 * taken from `crew` when given (started earlier, see `DecodeCrew`).
 */
export async function* extOriginalPieces(src: ExtSource, workers?: number, crew?: DecodeCrew): AsyncGenerator<{ parts: Buffer[]; release: (() => void) | null }> {
  const n = Math.min(decodeWorkersFor(src.expect.originalBytes, workers), src.blocks.length);
  if (n > 0) {
    for await (const { data, release } of decodeBlocksOnWorkers(src, n, crew)) yield { parts: [data], release };
    return;
  }
  for await (const { data, release } of decodeBlocksInThread(src)) yield { parts: [data], release };
}

/**
 * Verify an extended diet from disk: rebuild every line, compare size and SHA-256 with the
 * manifest. Throws MANIFEST_INVALID, EXT_* codes or MANIFEST_MISMATCH; never modifies anything.
 */
export async function verifyExtDiet(layout: ExecLayout, paths: { zst?: string; manifest?: string; workers?: number; crew?: DecodeCrew } = {}): Promise<DietVerification> {
  const manifestPath = paths.manifest ?? layout.manifest;
  const { src, manifest } = await openExtSource(layout, paths);
  const sha = createSha256();
  let bytes = 0;
  try {
    for await (const { parts, release } of extOriginalPieces(src, paths.workers, paths.crew)) {
      for (const p of parts) {
        sha.update(p);
        bytes += p.length;
      }
      release?.();
    }
  } finally {
    src.close();
  }
  const digest = sha.digestHex();
  if (digest !== manifest.originalSha256 || bytes !== manifest.originalBytes) {
    throw new JournalError("MANIFEST_MISMATCH", "the extended diet does not rebuild to the manifest's size and SHA-256", {
      path: manifestPath,
      expected: { originalSha256: manifest.originalSha256, originalBytes: manifest.originalBytes },
      actual: { originalSha256: digest, originalBytes: bytes },
    });
  }
  return { originalSha256: digest, originalBytes: bytes, manifest, pointerJournalBytes: src.fileBytes, manifestBytes: (await fsp.stat(manifestPath)).size };
}

function resultOf(layout: ExecLayout, status: DietResult["status"], m: DietManifest, ext: ExtManifestInfo, containerBytes: number, manifestBytes: number): DietResult {
  return {
    exec: layout.exec, status, kind: "extended", dietVersion: manifestFieldsOf("extended").dietVersion, originalSha256: m.originalSha256, originalBytes: m.originalBytes, totalEvents: m.totalEvents,
    stored: { pointerJournalBytes: containerBytes, manifestBytes, casBytes: 0, totalBytes: containerBytes + manifestBytes },
    bodies: { moved: ext.text.refs, unique: ext.text.unique, written: status === "dieted" ? ext.text.unique : 0, reused: 0 },
    verified: true,
  };
}

/** Plan an extended diet: runs the encoder without writing anything or taking the lock. */
export async function planExtDiet(exec: ExecRef, opts: ExtDietOptions = {}): Promise<DietPlan> {
  const layout = await requirePlain(resolveExec(exec));
  const fh = await openRegularForRead(layout.journal);
  try {
    const size = (await fh.stat()).size;
    const lastRun = await lastRunStatus(fh, size);
    const w = await writeExtContainer(fh, size, null, opts);
    return {
      exec: layout.exec, kind: "extended", dietVersion: manifestFieldsOf("extended").dietVersion, lastRun, runCheck: runOk(lastRun) ? "ok" : opts.force ? "forced" : "refused",
      originalBytes: w.originalBytes, originalSha256: w.originalSha256, lines: w.lines, frames: w.blocks,
      bodies: { moved: w.text.refs, unique: w.text.unique, movedBytes: 0, uniqueBytes: w.text.uniqueBytes },
      expectedPointerBytes: w.containerBytes, moves: [], movesTruncated: false,
    };
  } finally {
    await fh.close();
  }
}

/** An already dieted (extended) directory: re-verify and report it. */
export async function extAlreadyDieted(layout: ExecLayout): Promise<DietResult> {
  const v = await verifyExtDiet(layout);
  const ext = readExtInfo(layout.manifest) as ExtManifestInfo;
  return resultOf(layout, "already-dieted", v.manifest, ext, v.pointerJournalBytes, v.manifestBytes);
}

/** Diet `exec` into the extended format (see the module comment for the order of operations). */
export async function applyExtDiet(execRef: ExecRef, opts: ExtDietOptions = {}): Promise<DietResult> {
  const hook = opts.hook ?? (() => undefined);
  const layout = resolveExec(execRef);
  const exec = layout.exec;
  const presence = await journalPresence(layout);
  if (presence.kind === "dieted") {
    if (isExtDiet(layout)) return extAlreadyDieted(layout);
    throw new JournalError("ALREADY_DIETED", `${exec} is already dieted (compatible); restore it first to diet it extended`, { path: layout.manifest });
  }
  await requirePlain(layout);
  const lock = await claimLockForOfflineTool(layout, { now: opts.now });
  let fh: import("node:fs/promises").FileHandle | undefined;
  let published = false;
  // The verification's decode workers, started once the journal is read (their start-up and the
  // kernel's compilation overlap the last blocks' encoding and the writes, not the verification).
  let crew: DecodeCrew | undefined;
  try {
    fh = await openRegularForRead(layout.journal);
    const before = await fh.stat();
    const lastRun = await lastRunStatus(fh, before.size);
    if (!runOk(lastRun) && !opts.force) {
      throw new JournalError("RUN_NOT_FINISHED", `the last run of ${exec} is ${lastRun === "none" ? "absent" : lastRun}, not completed or failed`, {
        path: layout.journal, actual: lastRun, expected: ["completed", "failed"],
      }, { hint: "let the run finish, or pass --force to diet anyway (the lock is still required)" });
    }
    const sidecar = await readSidecarStatus(layout, before.size);
    const trusted = sidecar.status === "ok" ? sidecar.sidecar : undefined;
    // As in the compatible diet: refuse up front what would fail only after the pair is published
    // and events.jsonl deleted (a directory at events.meta.json) or half-way (a directory at a temp).
    await assertRegularFile(layout.sidecar);
    await assertTempUsable(layout.dietedJournalTmp);
    await assertTempUsable(layout.manifestTmp);
    await hook("start", 0);
    await rmQuiet(layout.dietedJournalTmp);
    await rmQuiet(layout.manifestTmp);
    await hook("swept", 0);

    const zfh = await createTemp(layout.dietedJournalTmp);
    let w: ExtWriteResult;
    try {
      w = await writeExtContainer(fh, before.size, zfh, {
        ...opts, hook, onReadDone: () => {
          const n = decodeWorkersFor(before.size, opts.workers);
          if (n > 0) crew = new DecodeCrew(n);
        },
      });
      await zfh.sync();
    } finally {
      await zfh.close();
    }
    await hook("zst-written", 0);

    const ext = extInfoOf(w);
    const manifest: DietManifest = {
      schemaVersion: 1, dietVersion: manifestFieldsOf("extended").dietVersion,
      eventSchemaVersion: trusted?.eventSchemaVersion ?? (sidecar.status === "stale" ? sidecar.sidecar.eventSchemaVersion : 1),
      totalEvents: trusted?.totalEvents ?? w.totalEvents,
      originalSha256: w.originalSha256, originalBytes: w.originalBytes,
      segments: [{ id: 0, events: trusted?.totalEvents ?? w.totalEvents }],
      dietedAt: new Date((opts.now ?? Date.now)()).toISOString(),
      lines: w.lines, endsWithNewline: w.endsWithNewline,
    };
    const manifestText = Buffer.from(serializeExtManifest(manifest, ext), "utf8");
    const mfh = await createTemp(layout.manifestTmp);
    try {
      await mfh.writeFile(manifestText);
      await mfh.sync();
    } finally {
      await mfh.close();
    }
    await fsyncDir(layout.eventsDir);
    await hook("tmp-written", 0);

    try {
      await verifyExtDiet(layout, { zst: layout.dietedJournalTmp, manifest: layout.manifestTmp, workers: opts.workers, crew });
    } catch (e) {
      throw new JournalError("DIET_VERIFY_FAILED", `the written diet did not verify: ${(e as Error).message}`, { path: layout.dietedJournalTmp }, { cause: e });
    }
    await hook("verified", 0);
    await publishPair(layout, before, lock, hook, {
      published: () => { published = true; },
      closeJournal: async () => { await fh?.close(); fh = undefined; },
    });
    return resultOf(layout, "dieted", manifest, ext, w.containerBytes, manifestText.length);
  } catch (e) {
    // An OS error (a full disk, a read-only mount) is coded: NO_SPACE, READ_ONLY, …
    throw errnoOf(e) !== undefined ? ioError(e, layout.eventsDir) : e;
  } finally {
    await crew?.close();
    await fh?.close();
    if (!published) {
      await rmQuiet(layout.dietedJournalTmp);
      await rmQuiet(layout.manifestTmp);
    }
    await lock.release();
  }
}
