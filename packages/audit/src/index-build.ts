/**
 * `index`: build the derived SQLite database of a journal (events, transitions, codon attempts,
 * runs, findings) into `resolveExec(exec).indexTmp`, then fsync and rename it into place.
 *
 * Incremental: the index remembers how far it read (`indexed_bytes`, the next line number, the
 * offset/length/SHA-256 of the last indexed line) and the audit fold's snapshot. When the plain
 * journal only grew, a copy of the index continues from `indexed_bytes` and reads only the new
 * lines; when the prefix changed (different last line, shrunk file, other schema or journal kind)
 * it is rebuilt from scratch. An incremental index has the same table contents as a full build.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import type Database from "better-sqlite3";
import { sqlite } from "./sqlite.js";
import { type JournalReader, type LinePosition, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { assertTempUsable, fsyncFile, publishTemp, removeQuietly } from "@hankweave-journal/journal";
import { openReader } from "@hankweave-journal/diet";
import { AuditFold, type AuditFoldSnapshot } from "./audit-fold.js";
import { INDEX_SCHEMA_VERSION } from "./index-schema.js";
import { IndexWorker } from "./index-worker.js";
import { journalFingerprint, readIndexMeta, type IndexMeta } from "./index-meta.js";
import { withIndexLock } from "./index-lock.js";
import type { Hash } from "node:crypto";
import { summarizeRuns } from "./run-summary.js";
import { foldWithParseAhead, type ParseAheadOptions, type Seen } from "./parse-ahead.js";

/** Every event id of the index at `path` with its first line (to continue DUPLICATE_ID checks). */
function loadIds(path: string): [string, number][] {
  const db = new (sqlite())(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT id, MIN(line) AS line FROM events GROUP BY id").raw().all() as [string, number][];
  } finally {
    db.close();
  }
}

/** What `buildIndex` did. */
export interface IndexResult {
  path: string;
  /** `unchanged`: the index already covered the journal; nothing was written. */
  mode: "full" | "incremental" | "unchanged";
  /** Why a full build was chosen (null otherwise). */
  reason: string | null;
  /** Physical lines and bytes read by this call. */
  linesRead: number;
  bytesRead: number;
  eventsAdded: number;
  transitionsAdded: number;
  findingsAdded: number;
  /** Totals in the index afterwards. */
  events: number;
  transitions: number;
  ms: number;
}

/** Options of `buildIndex`. */
export interface IndexOptions {
  /** Ignore an existing index and rebuild from line 0. */
  full?: boolean;
  /** Plain journals: read size and who parses (tests use tiny chunks and each parser). */
  parseAhead?: ParseAheadOptions;
}

type Plan = { mode: "full"; reason: string } | { mode: "incremental"; meta: IndexMeta; prefix: Hash } | { mode: "unchanged"; meta: IndexMeta };

/** SHA-256 of the line starting at `at` (its `\n` included), read through the reader; null when there is none. */
async function lineSha256(reader: JournalReader, at: LinePosition): Promise<string | null> {
  for await (const c of reader.chunks({ start: at, toLine: at.line })) {
    return c.firstOffset === at.offset ? createHash("sha256").update(c.bytes).digest("hex") : null;
  }
  return null;
}

/**
 * SHA-256 of the journal's first `bytes` bytes (a line boundary), read through the reader; null
 * when the journal has fewer whole lines' bytes. Returns the live hash (copy() it to read a digest
 * and go on).
 */
async function hashPrefix(reader: JournalReader, bytes: number): Promise<Hash | null> {
  const hash = createHash("sha256");
  let at = 0;
  if (bytes === 0) return hash;
  for await (const c of reader.chunks({})) {
    if (!c.terminated) break;
    const take = Math.min(c.bytes.length, bytes - at);
    hash.update(take === c.bytes.length ? c.bytes : c.bytes.subarray(0, take));
    at += take;
    if (at === bytes) return hash;
  }
  return null;
}

async function planIndex(layout: ExecLayout, reader: JournalReader, bytes: number, full: boolean): Promise<Plan> {
  if (full) return { mode: "full", reason: "--full" };
  const kind = reader.kind;
  const meta = readIndexMeta(layout.index);
  if (typeof meta === "string") return { mode: "full", reason: meta };
  if (meta.kind !== kind) return { mode: "full", reason: `journal kind changed (${meta.kind} → ${kind})` };
  if (kind === "dieted") return bytes === meta.journalBytes ? { mode: "unchanged", meta } : { mode: "full", reason: "dieted journal changed" };
  if (bytes < meta.indexedBytes) return { mode: "full", reason: "journal shrank" };
  // Untouched since the build (same inode, size, mtime, ctime): nothing to read.
  if (meta.fingerprint !== null && bytes === meta.journalBytes && meta.fingerprint === journalFingerprint(await fsp.stat(layout.journal, { bigint: true }))) {
    return { mode: "unchanged", meta };
  }
  if (meta.lastLineOffset >= 0) {
    const sha = await lineSha256(reader, { line: meta.nextLine - 1, offset: meta.lastLineOffset });
    if (sha !== meta.lastLineSha256) return { mode: "full", reason: "the last indexed line changed" };
  }
  // Touched or grown: every indexed byte must be what was indexed (a same-size middle edit too).
  const prefix = await hashPrefix(reader, meta.indexedBytes);
  if (prefix === null || prefix.copy().digest("hex") !== meta.prefixSha256) return { mode: "full", reason: "the indexed prefix changed" };
  return { mode: "incremental", meta, prefix };
}

/**
 * Writeback overlapped with the build: while the worker writes the temp database, an fdatasync of
 * it runs in the thread pool whenever none is running, so the final fsync finds few dirty pages
 * (at 1 GB it otherwise wrote ~240 MB after the last insert).
 */
class Writeback {
  private fh: fsp.FileHandle | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly path: string) {}

  /** Start an fdatasync unless one is running (errors are ignored: the final fsync reports them). */
  kick(): void {
    if (this.running !== null || this.closed) return;
    this.running = (async () => {
      try {
        this.fh ??= await fsp.open(this.path, "r");
        await this.fh.datasync();
      } catch {
        // The file may not exist yet; the final fsync is the one that counts.
      } finally {
        this.running = null;
      }
    })();
  }

  /** Keep syncing until `done` settles. */
  async during<T>(done: Promise<T>): Promise<T> {
    let settled = false;
    const watched = done.finally(() => {
      settled = true;
    });
    while (!settled) {
      this.kick();
      await Promise.race(this.running === null ? [watched] : [watched, this.running]);
    }
    return watched;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
    await this.fh?.close();
    this.fh = null;
  }
}

/**
 * Build or update the index of `exec` (see the module comment).
 *
 * Guarantees: the published index is always complete (temp file + fsync + rename); the journal
 * is only read; a failure leaves the previous index untouched and removes the temp file.
 * @example const r = await buildIndex("/runs/x"); r.mode; // "full" the first time, then "unchanged"/"incremental"
 */
export async function buildIndex(exec: ExecRef, opts: IndexOptions = {}): Promise<IndexResult> {
  const started = performance.now();
  // One build per execution at a time; a waiter plans again from what the other one published.
  const layout = resolveExec(exec);
  return withIndexLock(layout, () => buildIndexLocked(layout, opts, started));
}

async function buildIndexLocked(layout: ExecLayout, opts: IndexOptions, started: number): Promise<IndexResult> {
  const reader = await openReader(layout);
  try {
    const info = await reader.info();
    const statBefore = reader.kind === "plain" ? journalFingerprint(await fsp.stat(layout.journal, { bigint: true })) : null;
    const plan = await planIndex(layout, reader, info.bytes, opts.full === true);
    if (plan.mode === "unchanged") {
      return {
        path: layout.index, mode: "unchanged", reason: null, linesRead: 0, bytesRead: 0, eventsAdded: 0, transitionsAdded: 0,
        findingsAdded: 0, events: plan.meta.events, transitions: plan.meta.transitions, ms: performance.now() - started,
      };
    }
    await assertTempUsable(layout.indexTmp); // a directory there: NOT_A_REGULAR_FILE before anything is written
    await removeQuietly(layout.indexTmp);
    let snapshot: AuditFoldSnapshot | undefined;
    let ids: Iterable<[string, number]> | undefined;
    const seen: Seen = { line: -1, offset: -1, length: 0, count: 0, bytes: 0 };
    let start = { offset: 0, line: 0 };
    if (plan.mode === "incremental") {
      await fsp.copyFile(layout.index, layout.indexTmp);
      ids = loadIds(layout.indexTmp);
      snapshot = plan.meta.fold;
      start = { offset: plan.meta.indexedBytes, line: plan.meta.nextLine };
      seen.line = plan.meta.nextLine - 1;
      seen.offset = plan.meta.lastLineOffset;
      seen.length = plan.meta.indexedBytes - plan.meta.lastLineOffset;
    }
    // The SHA-256 of the indexed prefix is taken in the pass (plain journals; an incremental build
    // continues the hash its plan checked).
    const prefixHash = reader.kind !== "plain" ? null : plan.mode === "incremental" ? plan.prefix : createHash("sha256");
    const writer = new IndexWorker({ path: layout.indexTmp, full: plan.mode === "full", dropTornTail: plan.mode === "incremental" });
    const writeback = new Writeback(layout.indexTmp);
    let ok = false;
    try {
      const fold = new AuditFold(writer.sink(), snapshot, ids);
      const before = fold.totals;
      await foldWithParseAhead(fold, writer, reader, start, seen, opts.parseAhead, {
        afterChunk: (chunk) => {
          prefixHash?.update(chunk.bytes);
          writeback.kick();
          return writer.flush();
        },
      });
      const indexedBytes = seen.offset < 0 ? 0 : seen.offset + seen.length;
      let lastSha: string | null = null;
      // Only a plain journal is continued incrementally (a dieted one cannot grow): only its last line is hashed.
      if (seen.offset >= 0 && reader.kind === "plain") lastSha = await lineSha256(reader, { line: seen.line, offset: seen.offset });
      let prefixSha256: string | null = null;
      let fingerprint: string | null = null;
      if (prefixHash !== null) {
        prefixSha256 = prefixHash.digest("hex");
        // Trust the stat next time only when nothing touched the journal while it was read.
        const statAfter = journalFingerprint(await fsp.stat(layout.journal, { bigint: true }));
        if (statAfter === statBefore && start.offset + seen.bytes === info.bytes) fingerprint = statAfter;
      }
      const totals = fold.totals;
      await writeback.during(writer.finish(summarizeRuns(fold.state, fold.lines), {
        schemaVersion: INDEX_SCHEMA_VERSION, kind: reader.kind, journalBytes: start.offset + seen.bytes, indexedBytes,
        nextLine: seen.line + 1, lastLineOffset: seen.offset, lastLineSha256: lastSha, events: totals.events, transitions: totals.transitions,
        fold: fold.snapshot(), prefixSha256, fingerprint,
      }));
      await writeback.close();
      await fsyncFile(layout.indexTmp);
      await publishTemp(layout.indexTmp, layout.index);
      ok = true;
      return {
        path: layout.index, mode: plan.mode, reason: plan.mode === "full" ? plan.reason : null, linesRead: seen.count,
        bytesRead: seen.bytes, eventsAdded: totals.events - before.events, transitionsAdded: totals.transitions - before.transitions,
        findingsAdded: writer.findingsWritten, events: totals.events, transitions: totals.transitions,
        ms: performance.now() - started,
      };
    } finally {
      if (!ok) {
        await writeback.close();
        await writer.terminate();
        fs.rmSync(layout.indexTmp, { force: true });
      }
    }
  } finally {
    await reader.close();
  }
}
