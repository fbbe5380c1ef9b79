/**
 * `index`: build the derived SQLite database of a journal (events, transitions, codon attempts,
 * runs, findings) into `layoutOf(exec).indexTmp`, then fsync and rename it into place.
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
import Database from "better-sqlite3";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { AuditFold, type AuditFoldSnapshot } from "./audit-fold.js";
import { INDEX_SCHEMA_VERSION, SCHEMA_INDEXES_SQL, SCHEMA_TABLES_SQL } from "./index-schema.js";
import { IndexWriter } from "./index-writer.js";
import { feedRawLine, rawLineBatches } from "./line-feed.js";
import { readIndexMeta, type IndexMeta } from "./index-meta.js";

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
}

type Plan = { mode: "full"; reason: string } | { mode: "incremental"; meta: IndexMeta } | { mode: "unchanged"; meta: IndexMeta };

async function sha256Of(fh: fsp.FileHandle, offset: number, length: number): Promise<string | null> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, offset);
  return bytesRead === length ? createHash("sha256").update(buf).digest("hex") : null;
}

async function planIndex(exec: string, kind: "plain" | "dieted", bytes: number, full: boolean): Promise<Plan> {
  if (full) return { mode: "full", reason: "--full" };
  const meta = readIndexMeta(layoutOf(exec).index);
  if (typeof meta === "string") return { mode: "full", reason: meta };
  if (meta.kind !== kind) return { mode: "full", reason: `journal kind changed (${meta.kind} → ${kind})` };
  if (kind === "dieted") return bytes === meta.journalBytes ? { mode: "unchanged", meta } : { mode: "full", reason: "dieted journal changed" };
  if (bytes < meta.indexedBytes) return { mode: "full", reason: "journal shrank" };
  if (meta.lastLineOffset >= 0) {
    const fh = await fsp.open(layoutOf(exec).journal, "r");
    try {
      const sha = await sha256Of(fh, meta.lastLineOffset, meta.indexedBytes - meta.lastLineOffset);
      if (sha !== meta.lastLineSha256) return { mode: "full", reason: "the last indexed line changed" };
    } finally {
      await fh.close();
    }
  }
  return bytes === meta.journalBytes ? { mode: "unchanged", meta } : { mode: "incremental", meta };
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await fsp.open(path, "r+");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, "r");
  try {
    await fh.sync();
  } catch {
    // Some file systems refuse fsync on directories; the rename is still atomic.
  } finally {
    await fh.close();
  }
}

/**
 * Build or update the index of `exec` (see the module comment).
 *
 * Guarantees: the published index is always complete (temp file + fsync + rename); the journal
 * is only read; a failure leaves the previous index untouched and removes the temp file.
 * @example const r = await buildIndex("/runs/x"); r.mode; // "full" the first time, then "unchanged"/"incremental"
 */
export async function buildIndex(exec: string, opts: IndexOptions = {}): Promise<IndexResult> {
  const started = performance.now();
  const layout = layoutOf(exec);
  const reader = await openReader(exec);
  try {
    const info = await reader.info();
    const plan = await planIndex(exec, reader.kind, info.bytes, opts.full === true);
    if (plan.mode === "unchanged") {
      return {
        path: layout.index, mode: "unchanged", reason: null, linesRead: 0, bytesRead: 0, eventsAdded: 0, transitionsAdded: 0,
        findingsAdded: 0, events: plan.meta.events, transitions: plan.meta.transitions, ms: performance.now() - started,
      };
    }
    await fsp.rm(layout.indexTmp, { force: true });
    if (plan.mode === "incremental") await fsp.copyFile(layout.index, layout.indexTmp);
    const db = new Database(layout.indexTmp);
    let ok = false;
    try {
      db.pragma("journal_mode = OFF");
      db.pragma("synchronous = OFF");
      db.pragma("cache_size = -65536");
      db.pragma("locking_mode = EXCLUSIVE"); // a private temp file: no other connection
      db.pragma("temp_store = MEMORY"); // index builds sort in memory
      if (plan.mode === "full") db.exec(SCHEMA_TABLES_SQL);
      const writer = new IndexWriter(db);
      let snapshot: AuditFoldSnapshot | undefined;
      let ids: Iterable<[string, number]> | undefined;
      const seen = { line: -1, offset: -1, length: 0, count: 0, bytes: 0 };
      let start = { offset: 0, line: 0 };
      if (plan.mode === "incremental") {
        snapshot = plan.meta.fold;
        ids = writer.loadIds();
        writer.dropTornTail();
        start = { offset: plan.meta.indexedBytes, line: plan.meta.nextLine };
        seen.line = plan.meta.nextLine - 1;
        seen.offset = plan.meta.lastLineOffset;
        seen.length = plan.meta.indexedBytes - plan.meta.lastLineOffset;
      }
      db.exec("BEGIN");
      const fold = new AuditFold(writer.sink(), snapshot, ids);
      const before = fold.totals;
      const findingsBefore = writer.findingsWritten;
      for await (const batch of rawLineBatches(reader, layout.journal, start)) {
        for (const raw of batch) {
          seen.count += 1;
          seen.bytes += raw.bytes.length + (raw.terminated ? 1 : 0);
          if (raw.terminated) {
            seen.line = raw.line;
            seen.offset = raw.offset;
            seen.length = raw.bytes.length + 1;
          }
          feedRawLine(fold, raw);
        }
      }
      writer.replaceRunsAndAttempts(fold.state, fold.lines);
      const indexedBytes = seen.offset < 0 ? 0 : seen.offset + seen.length;
      let lastSha: string | null = null;
      if (seen.offset >= 0 && reader.kind === "plain") {
        const h = await fsp.open(layout.journal, "r");
        try {
          lastSha = await sha256Of(h, seen.offset, seen.length);
        } finally {
          await h.close();
        }
      }
      const totals = fold.totals;
      writer.writeMeta({
        schemaVersion: INDEX_SCHEMA_VERSION, kind: reader.kind, journalBytes: start.offset + seen.bytes, indexedBytes,
        nextLine: seen.line + 1, lastLineOffset: seen.offset, lastLineSha256: lastSha, events: totals.events, transitions: totals.transitions,
        fold: fold.snapshot(),
      });
      db.exec("COMMIT");
      if (plan.mode === "full") db.exec(SCHEMA_INDEXES_SQL);
      db.close();
      await fsyncFile(layout.indexTmp);
      await fsp.rename(layout.indexTmp, layout.index);
      await fsyncDir(layout.hankweave);
      ok = true;
      return {
        path: layout.index, mode: plan.mode, reason: plan.mode === "full" ? plan.reason : null, linesRead: seen.count,
        bytesRead: seen.bytes, eventsAdded: totals.events - before.events, transitionsAdded: totals.transitions - before.transitions,
        findingsAdded: writer.findingsWritten - findingsBefore, events: totals.events, transitions: totals.transitions,
        ms: performance.now() - started,
      };
    } finally {
      if (!ok) {
        if (db.open) db.close();
        fs.rmSync(layout.indexTmp, { force: true });
      }
    }
  } finally {
    await reader.close();
  }
}
