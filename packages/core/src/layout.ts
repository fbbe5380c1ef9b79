/**
 * The on-disk layout of an execution directory (format §1). This module is the only place that
 * joins path strings for these files; everyone else asks it.
 *
 * Guarantees: pure string functions (no I/O, no `node:*`), POSIX separators, no trailing slash.
 * A CAS path is only built from a validated 64-char lowercase hex sha (anything else throws
 * `CAS_BAD_REF`), so a hostile `contentRef` can never name a path outside `cas/`.
 *
 * @example
 *   const l = layoutOf("/runs/x");
 *   l.journal; // "/runs/x/.hankweave/events/events.jsonl"
 *   l.casBlob("ab12…"); // "/runs/x/.hankweave/events/cas/ab/ab12….zst"
 */
import { JournalError } from "./errors.js";

export const HANKWEAVE_DIR = ".hankweave";
export const EVENTS_DIR = "events";
export const JOURNAL_FILE = "events.jsonl";
export const SIDECAR_FILE = "events.meta.json";
export const DIETED_JOURNAL_FILE = "events.jsonl.zst";
export const MANIFEST_FILE = "journal.meta.json";
export const CAS_DIR = "cas";
export const STATE_FILE = "state.json";
export const LOCK_FILE = "runtime.lock";
/** Name prefix of a lock claimant's temp file (`runtime.lock.tmp-<lockId>`). */
export const LOCK_TMP_PREFIX = `${LOCK_FILE}.tmp-`;
export const EXECUTION_META_FILE = "execution-meta.json";
export const INDEX_FILE = "journal.index.sqlite";
/** Prefix of quarantined torn fragments: `events.jsonl.torn-<byteOffset>`. */
export const TORN_PREFIX = "events.jsonl.torn-";

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** True when `sha` is 64 lowercase hex characters. */
export function isSha256Hex(sha: unknown): sha is string {
  return typeof sha === "string" && SHA256_HEX.test(sha);
}

/** Join POSIX path segments, collapsing duplicate slashes. */
export function joinPath(...parts: string[]): string {
  const joined = parts.filter((p) => p.length > 0).join("/");
  return joined.replace(/\/{2,}/g, "/");
}

function stripTrailingSlash(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, "") : p;
}

/** Every path of one execution directory. */
export interface ExecLayout {
  readonly exec: string;
  readonly hankweave: string;
  readonly eventsDir: string;
  readonly journal: string;
  readonly sidecar: string;
  readonly sidecarTmp: string;
  readonly dietedJournal: string;
  readonly dietedJournalTmp: string;
  readonly manifest: string;
  readonly manifestTmp: string;
  readonly casDir: string;
  readonly state: string;
  readonly stateBak: string;
  readonly stateTmp: string;
  readonly lock: string;
  /** `runtime.lock.tmp-<lockId>`: the temp a claimant writes before renaming it over runtime.lock. */
  lockTmpFor(lockId: string): string;
  readonly executionMeta: string;
  readonly index: string;
  readonly indexTmp: string;
  /** `journal.index.sqlite.lock`: held (pid inside) by the one `index` build that writes indexTmp. */
  readonly indexLock: string;
  /** Temp file of a restore in progress (published with link()). */
  readonly restoreTmp: string;
  /** `events/events.jsonl.torn-<offset>`: a quarantined torn fragment; `attempt` > 0 gives `…torn-<offset>.<attempt>` (another fragment torn at the same offset later). */
  tornFragment(byteOffset: number, attempt?: number): string;
  /** Directory of the CAS shard for a sha: `cas/<sha[0:2]>`. */
  casShard(sha: string): string;
  /** `cas/<sha[0:2]>/<sha>.zst`. Throws CAS_BAD_REF for anything but 64 lowercase hex. */
  casBlob(sha: string): string;
  /** A unique temp path beside a CAS blob. */
  casBlobTmp(sha: string, unique: string): string;
}

/**
 * What a library entry point accepts as the execution: its directory path, or the layout the
 * caller already has (the CLI resolves `<exec>` once and passes its layout down).
 */
export type ExecRef = ExecLayout | string;

/**
 * The calling convention below the CLI: library entry points take an `ExecRef` and resolve it
 * here, once; internals take the `ExecLayout` only. A layout is returned as it is.
 * @example const layout = resolveExec(exec); layout.journal
 */
export function resolveExec(exec: ExecRef): ExecLayout {
  return typeof exec === "string" ? layoutOf(exec) : exec;
}

/** The layout of the execution directory `exec`. */
export function layoutOf(exec: string): ExecLayout {
  const root = stripTrailingSlash(exec);
  const hankweave = joinPath(root, HANKWEAVE_DIR);
  const eventsDir = joinPath(hankweave, EVENTS_DIR);
  const casDir = joinPath(eventsDir, CAS_DIR);
  const checkSha = (sha: string): string => {
    if (!isSha256Hex(sha)) {
      throw new JournalError("CAS_BAD_REF", `not a sha256 hex digest: ${JSON.stringify(sha).slice(0, 80)}`, {
        actual: sha,
        expected: "64 lowercase hex characters",
      });
    }
    return sha;
  };
  return {
    exec: root,
    hankweave,
    eventsDir,
    journal: joinPath(eventsDir, JOURNAL_FILE),
    sidecar: joinPath(eventsDir, SIDECAR_FILE),
    sidecarTmp: joinPath(eventsDir, `${SIDECAR_FILE}.tmp`),
    dietedJournal: joinPath(eventsDir, DIETED_JOURNAL_FILE),
    dietedJournalTmp: joinPath(eventsDir, `${DIETED_JOURNAL_FILE}.tmp`),
    manifest: joinPath(eventsDir, MANIFEST_FILE),
    manifestTmp: joinPath(eventsDir, `${MANIFEST_FILE}.tmp`),
    casDir,
    state: joinPath(hankweave, STATE_FILE),
    stateBak: joinPath(hankweave, `${STATE_FILE}.bak`),
    stateTmp: joinPath(hankweave, `${STATE_FILE}.tmp`),
    lock: joinPath(hankweave, LOCK_FILE),
    lockTmpFor: (lockId: string) => joinPath(hankweave, `${LOCK_TMP_PREFIX}${lockId}`),
    executionMeta: joinPath(hankweave, EXECUTION_META_FILE),
    index: joinPath(hankweave, INDEX_FILE),
    indexTmp: joinPath(hankweave, `${INDEX_FILE}.tmp`),
    indexLock: joinPath(hankweave, `${INDEX_FILE}.lock`),
    restoreTmp: joinPath(eventsDir, `${JOURNAL_FILE}.restore.tmp`),
    tornFragment: (byteOffset: number, attempt = 0) =>
      joinPath(eventsDir, `${TORN_PREFIX}${byteOffset}${attempt > 0 ? `.${attempt}` : ""}`),
    casShard: (sha: string) => joinPath(casDir, checkSha(sha).slice(0, 2)),
    casBlob: (sha: string) => joinPath(casDir, checkSha(sha).slice(0, 2), `${sha}.zst`),
    casBlobTmp: (sha: string, unique: string) =>
      joinPath(casDir, checkSha(sha).slice(0, 2), `${sha}.zst.tmp-${unique}`),
  };
}
