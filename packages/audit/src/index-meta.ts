/**
 * The `meta` table of the index: how far it read the journal and the fold snapshot to continue
 * from. Values are JSON text under fixed keys.
 */
import { existsSync, type BigIntStats } from "node:fs";
import type Database from "better-sqlite3";
import { sqlite } from "./sqlite.js";
import type { AuditFoldSnapshot } from "./audit-fold.js";
import { INDEX_SCHEMA_VERSION } from "./index-schema.js";

/** What the index remembers about the journal it was built from. */
export interface IndexMeta {
  schemaVersion: number;
  kind: "plain" | "dieted";
  /** Journal size (bytes) when the index was written, torn fragment included. */
  journalBytes: number;
  /** Offset just past the last indexed `\n`-terminated line: where an incremental build resumes. */
  indexedBytes: number;
  /** Line number of the first line not indexed. */
  nextLine: number;
  /** Offset of the last indexed terminated line (-1 when none). */
  lastLineOffset: number;
  /** SHA-256 of the last indexed line including its `\n` (plain journals), else null. */
  lastLineSha256: string | null;
  events: number;
  transitions: number;
  fold: AuditFoldSnapshot;
  /**
   * SHA-256 of the journal's bytes [0, indexedBytes) (plain journals; null for dieted): a middle
   * edit that keeps the size is caught by it, not only by the size or the last line.
   */
  prefixSha256: string | null;
  /** `journalFingerprint` of the journal when the index was written (null: unknown, check the hash). */
  fingerprint: string | null;
}

/** Keys stored in `meta`, in this order. */
export const META_KEYS: (keyof IndexMeta)[] = [
  "schemaVersion", "kind", "journalBytes", "indexedBytes", "nextLine", "lastLineOffset", "lastLineSha256", "events", "transitions", "fold", "prefixSha256", "fingerprint",
];

/** Read the meta of the index at `path`; a string says why it is unusable (absent, other schema, unreadable). */
export function readIndexMeta(path: string): IndexMeta | string {
  if (!existsSync(path)) return "no index yet";
  const Sqlite = sqlite(); // NATIVE_MODULE_UNAVAILABLE is not an unreadable index
  let db: Database.Database | undefined;
  try {
    db = new Sqlite(path, { readonly: true, fileMustExist: true });
    const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
    const meta: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const r of rows) meta[r.key] = JSON.parse(r.value);
    if (meta.schemaVersion !== INDEX_SCHEMA_VERSION) return `index schema ${String(meta.schemaVersion)} is not ${INDEX_SCHEMA_VERSION}`;
    for (const k of META_KEYS) if (!(k in meta)) return `index meta lacks ${k}`;
    return meta as unknown as IndexMeta;
  } catch (e) {
    return `index unreadable (${(e as Error).message})`;
  } finally {
    db?.close();
  }
}

/**
 * The stat fingerprint of a journal: a same-size edit changes mtime and ctime (ctime cannot be
 * set back by a user), so an unchanged fingerprint lets `query` skip reading the journal.
 */
export function journalFingerprint(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}
