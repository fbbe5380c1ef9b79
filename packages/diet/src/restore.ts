/**
 * Restore (format §6): rebuild events.jsonl from the dieted pair, streaming, every body and the
 * whole result verified against the manifest BEFORE publishing; published with `link()` so an
 * existing events.jsonl is never overwritten. The pair and the CAS are kept.
 */
import * as fsp from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { JournalError, resolveExec, type ExecLayout, type ExecRef } from "@hankweave-journal/core";
import { createSha256, fsyncDir, writeAll } from "@hankweave-journal/cas";
import { journalPresence, openRegularForRead } from "@hankweave-journal/journal";
import { DietedSource } from "./dieted-source.js";
import { readManifest } from "./manifest.js";
import { originalPieces, type PipelineStats } from "./restore-pipeline.js";
import { extOriginalPieces, isExtDiet, openExtSource } from "./ext/ext-diet.js";
import { extRestoreWorkersFor } from "./ext/decode-pool.js";

/** Crash-test hook, as for the diet. */
export type RestoreHook = (step: string, n: number) => void | Promise<void>;

/** What a restore did. */
export interface RestoreResult {
  exec: string;
  status: "restored" | "already-restored";
  originalSha256: string;
  originalBytes: number;
  /** How the file was published: a hard link, or the checked-rename fallback. */
  publishedBy: "link" | "rename" | null;
}

/** SHA-256 and size of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const fh = await openRegularForRead(path);
  try {
    const sha = createSha256();
    const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
    let pos = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      sha.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
    return { sha256: sha.digestHex(), bytes: pos };
  } finally {
    await fh.close();
  }
}

function conflict(layout: ExecLayout, expected: string, actual: string): JournalError {
  return new JournalError("RESTORE_CONFLICT", "events.jsonl exists and differs from the dieted journal; restore never overwrites", {
    path: layout.journal,
    expected,
    actual,
  }, { hint: "move events.jsonl aside if the dieted journal is the one you want back" });
}

/**
 * Bytes written between two background fdatasync calls of the restore temp (at most one runs at a
 * time, so the disk writes while this thread decodes). This machine has 24 GiB: the kernel starts
 * no writeback of its own below ~2.4 GB of dirty pages, so without these calls every byte would
 * wait for the final fsync. At 100 MB the span from the last write to "synced" was 65–136 ms
 * with 64 MiB, 21–38 ms with 8 MiB (32 MiB 66–73, 16 MiB 32–42, 4 MiB 29–60; docs/diet.md).
 */
export const DATASYNC_EVERY_BYTES = 8 * 1024 * 1024;


const LINK_UNSUPPORTED = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "EXDEV", "ENOSYS", "EMLINK"]);

/**
 * Restore `exec`'s events.jsonl from its dieted pair.
 *
 * Guarantees: MANIFEST_INVALID without a valid manifest, HALF_PAIR for half a pair; a no-op
 * success when events.jsonl already matches; RESTORE_CONFLICT when it differs; the published
 * file always has the manifest's size and SHA-256 (MANIFEST_MISMATCH otherwise, nothing published).
 *
 * @example const r = await restoreJournal("/runs/x"); r.status // "restored"
 */
export async function restoreJournal(
  exec: ExecRef,
  opts: {
    hook?: RestoreHook;
    datasyncEveryBytes?: number;
    /** Worker threads rebuilding frames or blocks (0: all in this thread); default by size and cores (restoreWorkersFor; an extended diet: extRestoreWorkersFor). */
    workers?: number;
    /** Filled with what the fast path did. */
    stats?: PipelineStats;
  } = {},
): Promise<RestoreResult> {
  const datasyncEvery = opts.datasyncEveryBytes ?? DATASYNC_EVERY_BYTES;
  const hook = opts.hook ?? (() => undefined);
  const layout = resolveExec(exec);
  const presence = await journalPresence(layout);
  if (presence.kind === "half") {
    throw new JournalError("HALF_PAIR", `only ${presence.present === "zst" ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair exists`, { path: layout.eventsDir });
  }
  const manifest = await readManifest(layout);
  if (presence.kind === "plain") {
    const have = await hashFile(layout.journal);
    if (have.sha256 !== manifest.originalSha256 || have.bytes !== manifest.originalBytes) {
      throw conflict(layout, manifest.originalSha256, have.sha256);
    }
    await fsp.rm(layout.restoreTmp, { force: true });
    return { exec: layout.exec, status: "already-restored", originalSha256: have.sha256, originalBytes: have.bytes, publishedBy: null };
  }
  // An extended diet (dietVersion 2, ext/) is rebuilt by its own reader; the rest is shared.
  const ext = isExtDiet(layout) ? (await openExtSource(layout)).src : null;
  const src = ext === null ? await DietedSource.open(layout, manifest) : null;
  await fsp.rm(layout.restoreTmp, { force: true });
  const out = await fsp.open(layout.restoreTmp, "wx", 0o644);
  let published = false;
  try {
    const sha = createSha256();
    let bytes = 0;
    let chunks = 0;
    // One write in flight: piece k is written on the threadpool while it is hashed here and
    // later frames are rebuilt (by the workers, or decompressed ahead on the threadpool); the
    // next write starts only once this one finished, and then gives its ring slot back.
    let writing: Promise<void> = Promise.resolve();
    // Writeback overlapped with the work: every DATASYNC_EVERY_BYTES an fdatasync runs in the
    // background (at most one at a time), so the final fsync before link() only flushes the tail.
    let syncing: Promise<void> | null = null;
    let syncedUpTo = 0;
    let syncError: unknown = null;
    try {
      for await (const { parts, release } of ext ? extOriginalPieces(ext, opts.workers ?? extRestoreWorkersFor(ext.expect.originalBytes)) : originalPieces(src as DietedSource, opts.workers, opts.stats)) {
        await writing;
        await hook("chunk", ++chunks);
        if (syncing === null && bytes - syncedUpTo >= datasyncEvery) {
          syncedUpTo = bytes;
          syncing = out.datasync().then(() => {
            syncing = null;
          }, (e: unknown) => {
            syncError ??= e;
            syncing = null;
          });
        }
        writing = writevAll(out, parts, bytes);
        if (release !== null) writing = writing.then(release);
        writing.catch(() => undefined);
        for (const part of parts) {
          sha.update(part);
          bytes += part.length;
        }
      }
      await writing;
      // The final fsync starts now, beside a background fdatasync still running: every write has
      // completed, so this one covers them all (what it flushes the other is already writing).
      await Promise.all([out.sync(), syncing]);
      if (syncError !== null) throw syncError;
    } finally {
      await writing.catch(() => undefined);
      if (syncing !== null) await syncing;
      await out.close();
      ext?.close();
      await src?.close();
    }
    const digest = sha.digestHex();
    if (digest !== manifest.originalSha256 || bytes !== manifest.originalBytes) {
      throw new JournalError("MANIFEST_MISMATCH", "the rebuilt journal does not match the manifest; nothing was published", {
        path: layout.manifest,
        expected: { originalSha256: manifest.originalSha256, originalBytes: manifest.originalBytes },
        actual: { originalSha256: digest, originalBytes: bytes },
      });
    }
    await hook("verified", 0);
    const publishedBy = await publish(layout, manifest.originalSha256);
    published = true;
    await hook("published", 0);
    await fsp.rm(layout.restoreTmp, { force: true });
    await fsyncDir(layout.eventsDir);
    return { exec: layout.exec, status: "restored", originalSha256: digest, originalBytes: bytes, publishedBy };
  } finally {
    if (!published) await fsp.rm(layout.restoreTmp, { force: true }).catch(() => undefined);
  }
}

/** Write `parts` contiguously at `position` (one writev; short writes continue). */
async function writevAll(fh: FileHandle, parts: Buffer[], position: number): Promise<void> {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const { bytesWritten } = await fh.writev(parts, position);
  if (bytesWritten < total) await writeAll(fh, Buffer.concat(parts).subarray(bytesWritten), position + bytesWritten);
}

/** link(tmp → journal); never overwrites. Falls back to a checked rename where links are unsupported. */
async function publish(layout: ExecLayout, expectedSha: string): Promise<"link" | "rename"> {
  try {
    await fsp.link(layout.restoreTmp, layout.journal);
    await fsyncDir(layout.eventsDir);
    return "link";
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code === "EEXIST") {
      // Someone published first: fine only if it is the same journal.
      const have = await hashFile(layout.journal);
      if (have.sha256 !== expectedSha) throw conflict(layout, expectedSha, have.sha256);
      return "link";
    }
    if (!LINK_UNSUPPORTED.has(code)) throw new JournalError("IO_ERROR", `link failed: ${(e as Error).message}`, { path: layout.journal }, { cause: e });
  }
  // Checked rename: refuse if a journal appeared (a narrow race remains; documented).
  const exists = await fsp.lstat(layout.journal).then(() => true, () => false);
  if (exists) {
    const have = await hashFile(layout.journal);
    if (have.sha256 !== expectedSha) throw conflict(layout, expectedSha, have.sha256);
    return "rename";
  }
  await fsp.rename(layout.restoreTmp, layout.journal);
  await fsyncDir(layout.eventsDir);
  return "rename";
}
