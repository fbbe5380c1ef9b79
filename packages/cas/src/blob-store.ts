/**
 * The content-addressed body store `cas/<sha[0:2]>/<sha>.zst` (format §5.1): one zstd frame per
 * body at level 19, stored once per directory, every read verified by SHA-256.
 *
 * Paths come only from the execution's layout (`casBlob`, which rejects anything but 64 lowercase
 * hex, so a hostile `contentRef` can never name a file outside `cas/`); the functions take an ExecRef.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, type Stats } from "node:fs";
import * as fsp from "node:fs/promises";
import { JournalError, isJournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { sha256Hex } from "./sha.js";
import { CAS_ZSTD_LEVEL, decompressLimitFor, decompressZstd } from "./zstd.js";
import { compressOneShot } from "./zstd-native.js";
import { fsyncDir, ioError, lstatOrUndefined, sweepTemps, writeFileDurable, writeFileNoSyncSync } from "@hankweave-journal/journal";

let tmpPrefix: string | undefined;
let tmpCount = 0;
/** A hex token unique in this process (one random prefix, then a counter: no random call per blob). */
function tmpToken(): string {
  tmpPrefix ??= randomBytes(6).toString("hex");
  return tmpPrefix + (tmpCount++).toString(16);
}

/** lstat in this thread; undefined when nothing is there (no Error built). */
function lstatQuiet(p: string): Stats | undefined {
  try {
    return lstatSync(p, { throwIfNoEntry: false });
  } catch (e) {
    throw ioError(e, p);
  }
}

/** Bodies larger than this are refused on read (a guard, far above any real file body). */
export const CAS_MAX_BODY_BYTES = 1024 * 1024 * 1024;

/** Blobs up to this size are read with synchronous calls (see readBlob). */
const SYNC_READ_MAX_BYTES = 256 * 1024;

/** What `putBlob` did. */
export interface PutBlobResult {
  sha256: string;
  bytes: number;
  /** "written": a new blob; "reused": an existing blob verified; "replaced": a corrupt blob rewritten. */
  outcome: "written" | "reused" | "replaced";
  /** Size of the blob file on disk. */
  storedBytes: number;
}

/**
 * Store `body` (its sha computed if not given) durably: temp + fsync + rename + fsync dir.
 * An existing blob is reused only after it decompresses to that sha; a corrupt one is replaced.
 * `opts.compress` replaces the in-thread compressor (e.g. `ZstdPool.compress`; same frames).
 *
 * @example const r = await putBlob(exec, Buffer.from(text)); r.sha256
 */
export async function putBlob(
  exec: ExecRef,
  body: Buffer,
  sha?: string,
  opts: {
    compress?: (data: Buffer, level: number) => Promise<Buffer>;
    level?: number;
    /**
     * `deferred`: temp + rename only, no fsync; the caller MUST then `syncBlobs` every blob it
     * references (written or reused) before anything that references them is published.
     * Default: durable here (temp + fsync + rename + fsync of the shard).
     */
    durability?: "durable" | "deferred";
    /**
     * Deferred only: compress AND write the blob elsewhere (`ZstdPool.compressToFile`: make
     * `shard`, temp + rename, no fsync), resolving to the frame's size; replaces `compress` and
     * the write in this thread. The CAS directory exists (made here) before it is called. It may
     * return undefined instead: then this blob is compressed and written here.
     */
    writeVia?: (data: Buffer, level: number, file: { path: string; tmp: string; shard: string }) => Promise<number> | undefined;
  } = {},
): Promise<PutBlobResult> {
  const layout = resolveExec(exec);
  const sha256 = sha ?? sha256Hex(body);
  // Read before the compression: a compressor may take the body's buffer (ZstdPool's transfer).
  const bytes = body.length;
  const path = layout.casBlob(sha256);
  // Deferred (the diet): the checks and the write run in this thread. Each is microseconds on a
  // cached file system, where an async call is a threadpool round trip — and a missing file an
  // Error with a stack — that cost ~8 calls a blob (of ~7,000 at 100 MB body-heavy).
  const deferred = opts.durability === "deferred";
  const existing = deferred ? lstatQuiet(path) : await lstatOrUndefined(path);
  let outcome: PutBlobResult["outcome"] = "written";
  if (existing !== undefined) {
    try {
      await readBlob(layout, sha256, bytes);
      return { sha256, bytes, outcome: "reused", storedBytes: existing.size };
    } catch (e) {
      if (!isJournalError(e, "CAS_CORRUPT", "NOT_A_REGULAR_FILE", "ZSTD_TOO_LARGE", "CAS_MISSING")) throw e;
      if (existing.isDirectory()) throw e;
      outcome = "replaced";
    }
  }
  const shard = layout.casShard(sha256);
  if (deferred && opts.writeVia !== undefined) {
    // The CAS directory is made (and its entry synced) here, once; the writer makes the shard.
    if (lstatQuiet(layout.casDir) === undefined) {
      try {
        mkdirSync(layout.casDir, { recursive: true });
      } catch (e) {
        throw ioError(e, layout.casDir);
      }
      await fsyncDir(layout.eventsDir);
    }
    const written = opts.writeVia(body, opts.level ?? CAS_ZSTD_LEVEL, { path, tmp: layout.casBlobTmp(sha256, tmpToken()), shard });
    if (written !== undefined) return { sha256, bytes, outcome, storedBytes: await written };
  }
  const shardExisted = (deferred ? lstatQuiet(shard) : await lstatOrUndefined(shard)) !== undefined;
  if (!shardExisted) {
    const casExisted = (deferred ? lstatQuiet(layout.casDir) : await lstatOrUndefined(layout.casDir)) !== undefined;
    try {
      if (deferred) mkdirSync(shard, { recursive: true });
      else await fsp.mkdir(shard, { recursive: true });
    } catch (e) {
      throw ioError(e, shard);
    }
    if (!casExisted) await fsyncDir(layout.eventsDir);
    // Deferred: syncBlobs fsyncs the CAS directory once, after every shard was made (one of up
    // to 256 directory fsyncs per diet before, each a journal commit, in the blobs' own path).
    if (!deferred) await fsyncDir(layout.casDir);
  }
  const frame = await (opts.compress ?? compressOneShot)(body, opts.level ?? CAS_ZSTD_LEVEL);
  const tmp = layout.casBlobTmp(sha256, tmpToken());
  if (deferred) writeFileNoSyncSync(path, frame, { tmp });
  else await writeFileDurable(path, frame, { tmp });
  return { sha256, bytes, outcome, storedBytes: frame.length };
}

/** Blob fsyncs in flight at once in `syncBlobs` (concurrent fsyncs share the file system's journal commits). */
const SYNC_IN_FLIGHT = 32;

/**
 * Make the blobs `shas` durable: fsync each blob file, then each of their shard directories and
 * the CAS directory. After `putBlob(…, {durability: "deferred"})` this is what makes them safe to
 * reference; a reused blob is synced too (a killed earlier diet may have left it unsynced).
 * One batch at the end instead of two fsyncs per blob in turn (format §5.1: blobs durable before
 * the pair is published).
 */
export async function syncBlobs(exec: ExecRef, shas: Iterable<string>): Promise<void> {
  const layout = resolveExec(exec);
  const all = [...shas];
  const shards = new Set<string>();
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < all.length) {
      const sha = all[next++];
      const path = layout.casBlob(sha);
      shards.add(layout.casShard(sha));
      try {
        const fh = await fsp.open(path, "r");
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      } catch (e) {
        throw ioError(e, path);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SYNC_IN_FLIGHT, all.length) }, one));
  await Promise.all([...shards].map((d) => fsyncDir(d)));
  if (all.length > 0) await fsyncDir(layout.casDir);
}

/**
 * Read and verify the body `sha` (lazy: one blob, read when asked).
 *
 * Guarantees: returns exactly the bytes whose SHA-256 is `sha`, or throws: CAS_BAD_REF (not a
 * hex sha), CAS_MISSING (no blob), NOT_A_REGULAR_FILE, ZSTD_TOO_LARGE (frame claims more than
 * `expectedBytes` allows), CAS_CORRUPT (undecodable, wrong length or wrong hash).
 */
export async function readBlob(exec: ExecRef, sha: string, expectedBytes?: number): Promise<Buffer> {
  const layout = resolveExec(exec);
  const path = layout.casBlob(sha);
  let data: Buffer;
  try {
    // Small blobs (nearly all) are read synchronously: on a cached file that costs microseconds,
    // where the async path costs five threadpool round trips competing with decompression.
    const st = lstatSync(path);
    if (!st.isFile()) throw new JournalError("NOT_A_REGULAR_FILE", `${path} is not a regular file`, { path });
    data = st.size <= SYNC_READ_MAX_BYTES ? readFileSync(path) : await fsp.readFile(path);
  } catch (e) {
    if (isJournalError(e)) throw e;
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      throw new JournalError("CAS_MISSING", `CAS blob ${sha} is missing`, { path, expected: sha }, {
        hint: "the dieted journal cannot be read or restored without it; restore the cas/ directory from a backup",
      });
    }
    throw ioError(e, path);
  }
  const maxBytes = expectedBytes === undefined ? CAS_MAX_BODY_BYTES : decompressLimitFor(expectedBytes);
  let body: Buffer;
  try {
    body = await decompressZstd(data, { maxBytes, expectedBytes });
  } catch (e) {
    if (isJournalError(e, "ZSTD_CORRUPT")) {
      throw new JournalError("CAS_CORRUPT", `CAS blob ${sha} is corrupt: ${e.message}`, { path, expected: sha }, { cause: e });
    }
    // ZSTD_TOO_LARGE and the like come from a buffer and name no file: this blob is the one. An
    // error that names its own (NATIVE_MODULE_UNAVAILABLE: the module) keeps it.
    if (isJournalError(e) && e.details.path === undefined) e.details.path = path;
    throw e;
  }
  const actual = sha256Hex(body);
  if (actual !== sha) {
    throw new JournalError("CAS_CORRUPT", `CAS blob ${sha} decompresses to ${actual}`, { path, expected: sha, actual });
  }
  return body;
}

/** Remove stale temp files (`*.zst.tmp-*`) left in the CAS by a crash; returns how many. */
export async function sweepCasTemps(exec: ExecRef): Promise<number> {
  const layout = resolveExec(exec);
  let removed = 0;
  let shards: string[];
  try {
    shards = await fsp.readdir(layout.casDir);
  } catch {
    return 0;
  }
  for (const shard of shards) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    const dir = `${layout.casDir}/${shard}`;
    removed += (await sweepTemps(dir, (name) => /\.zst\.tmp-[0-9a-f]+$/.test(name))).length;
  }
  return removed;
}

/** Every blob sha present in the CAS (for verify and stats). */
export async function listBlobs(exec: ExecRef): Promise<{ sha256: string; storedBytes: number }[]> {
  const layout = resolveExec(exec);
  const out: { sha256: string; storedBytes: number }[] = [];
  let shards: string[];
  try {
    shards = (await fsp.readdir(layout.casDir)).sort();
  } catch {
    return out;
  }
  for (const shard of shards) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    const names = (await fsp.readdir(`${layout.casDir}/${shard}`).catch(() => [] as string[])).sort();
    for (const name of names) {
      const m = /^([0-9a-f]{64})\.zst$/.exec(name);
      if (!m || !m[1].startsWith(shard)) continue;
      const st = await lstatOrUndefined(layout.casBlob(m[1]));
      if (st?.isFile()) out.push({ sha256: m[1], storedBytes: st.size });
    }
  }
  return out;
}
