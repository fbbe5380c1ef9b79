/**
 * Discovery of execution directories under a fleet root (issue 19 item 1).
 *
 * `discoverExecutions(root, opts)` walks the tree below `root` depth first and yields one
 * `FleetEntry` per execution directory (a directory holding a `.hankweave/` directory; `root`
 * itself counts) and one per folder it could not search (unreadable, deeper than the bound), with
 * cheap facts about the journal: its kind (from the layout's files and the manifest), its size.
 *
 * Guarantees:
 * - Streaming: one open directory handle per level of the current path (opendir, read in batches),
 *   never a list of the tree; memory and descriptors are O(depth), depth ≤ `maxDepth` (default 64).
 * - Never follows a symbolic link below `root` (a link to a folder is not entered, a link named
 *   `.hankweave` is a broken entry), and never loops: a folder whose dev:ino is one of its own
 *   ancestors (a bind mount onto itself) is not entered again.
 * - Never enters an execution's `.hankweave/` (its CAS may hold 10⁵ files); does enter the
 *   execution's other folders, so nested executions are found too.
 * - Never throws on what it finds: an unreadable folder, a half pair or an invalid manifest is an
 *   entry of kind `broken` with a stable `code`. Throws FLEET_ROOT_INVALID when `root` is not a
 *   directory, and PERMISSION_DENIED / IO_ERROR when `root` itself cannot be read.
 * - Read-only: nothing is written, no lock is taken.
 * - Order: depth first, in directory order (not sorted; callers sort).
 *
 * This signature is relied on by the export of a root (`packages/fleet/src/export`): keep it stable.
 *
 * @example
 *   for await (const e of discoverExecutions("/runs")) console.log(e.rel, e.kind); // "ci/42 compatible"
 */
import * as fsp from "node:fs/promises";
import { statSync, lstatSync, opendirSync, type Stats, type Dir } from "node:fs";
import { resolve as resolvePath } from "node:path";
import { HANKWEAVE_DIR, JournalError, isJournalError, joinPath, resolveExec, type ErrorCode, type ExecRef } from "@hankweave-journal/core";
import { ioError } from "@hankweave-journal/journal";
import { kindOfManifest, readManifest, type DietKind } from "@hankweave-journal/diet";

export type { DietKind };

/** What an execution holds, journal-wise: a plain journal, a diet of one kind, nothing, or something broken. */
export type JournalKind = "plain" | DietKind | "none" | "broken";

/** The manifest facts of a dieted journal (from `journal.meta.json`, format §5.1). */
export interface ManifestFacts {
  dietVersion: 1 | 2;
  totalEvents: number;
  originalBytes: number;
  originalSha256: string;
  dietedAt: string;
}

/** One execution directory (or one folder that could not be searched) found under a root. */
export interface FleetEntry {
  /** Absolute path, no trailing slash. */
  path: string;
  /** Path relative to the root (`.` for the root itself), POSIX separators. */
  rel: string;
  /** False for a folder reported because it could not be searched (unreadable, too deep): it may or may not be an execution. */
  execution: boolean;
  kind: JournalKind;
  /** The stable code of a broken entry (HALF_PAIR, MANIFEST_INVALID, PERMISSION_DENIED, …), else null. */
  code: ErrorCode | null;
  /** Why it is broken, else null. */
  message: string | null;
  /** Bytes of events.jsonl (plain) or events.jsonl.zst (dieted), else null. */
  journalBytes: number | null;
  /** Manifest facts of a dieted journal (also of a plain one restored beside its kept pair), else null. */
  manifest: ManifestFacts | null;
  /** Which diet the kept pair of a restored (plain) journal is, else null. */
  restoredFrom: DietKind | null;
}

export interface DiscoverOptions {
  /** Deepest folder level searched (root = 0). Default 64; a folder below it is a `FLEET_TOO_DEEP` entry, not searched. */
  maxDepth?: number;
  /** Stop early: the iterator throws the signal's reason at the next folder. */
  signal?: AbortSignal;
  /** Called after each folder is searched, with the count so far (progress lines). */
  onFolder?: (folders: number) => void;
}

/** Default depth bound: one open directory handle per level, far below any descriptor limit. */
export const DISCOVER_MAX_DEPTH = 64;
/** Directory entries read per opendir batch (fewer syscalls than the default 32). */
const DIR_BATCH_ENTRIES = 256;

function codeOf(e: unknown, path: string): { code: ErrorCode; message: string } {
  const je = isJournalError(e) ? e : ioError(e, path);
  return { code: je.code, message: je.message };
}

function brokenEntry(path: string, rel: string, execution: boolean, code: ErrorCode, message: string): FleetEntry {
  return { path, rel, execution, kind: "broken", code, message, journalBytes: null, manifest: null, restoredFrom: null };
}

/** stat that maps a missing file to undefined and any other failure to a JournalError. */
function statQuiet(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (e) {
    const c = (e as NodeJS.ErrnoException).code;
    if (c === "ENOENT" || c === "ENOTDIR") return undefined;
    throw ioError(e, path);
  }
}

/**
 * The journal kind and cheap facts of the execution directory `exec` (a few stats and, for a
 * dieted journal, the manifest: no journal byte is read). Never throws: problems are a `broken`
 * entry with a code.
 */
export async function classifyExecution(exec: ExecRef, rel = "."): Promise<FleetEntry> {
  const l = resolveExec(exec);
  const base: FleetEntry = { path: l.exec, rel, execution: true, kind: "none", code: null, message: null, journalBytes: null, manifest: null, restoredFrom: null };
  try {
    const hw = lstatSync(l.hankweave);
    if (hw.isSymbolicLink()) return brokenEntry(l.exec, rel, true, "SYMLINK_REFUSED", `${l.hankweave} is a symbolic link (never followed)`);
    const journal = statQuiet(l.journal);
    const zst = statQuiet(l.dietedJournal);
    const manifestSt = statQuiet(l.manifest);
    for (const [p, st] of [[l.journal, journal], [l.dietedJournal, zst], [l.manifest, manifestSt]] as const) {
      if (st && !st.isFile()) return brokenEntry(l.exec, rel, true, "NOT_A_REGULAR_FILE", `${p} is not a regular file`);
    }
    let manifest: ManifestFacts | null = null;
    let diet: DietKind | null = null;
    if (zst && manifestSt) {
      const m = await readManifest(l);
      manifest = { dietVersion: m.dietVersion, totalEvents: m.totalEvents, originalBytes: m.originalBytes, originalSha256: m.originalSha256, dietedAt: m.dietedAt };
      diet = kindOfManifest(m);
    }
    // events.jsonl wins whenever it exists (format §3); the kept pair of a restore is a fact.
    if (journal) return { ...base, kind: "plain", journalBytes: journal.size, manifest, restoredFrom: diet };
    if (zst && manifestSt) return { ...base, kind: diet!, journalBytes: zst.size, manifest };
    if (zst || manifestSt) {
      return brokenEntry(l.exec, rel, true, "HALF_PAIR", `${l.eventsDir} has no events.jsonl and only ${zst ? "events.jsonl.zst" : "journal.meta.json"} of the dieted pair`);
    }
    return base;
  } catch (e) {
    const { code, message } = codeOf(e, l.exec);
    return brokenEntry(l.exec, rel, true, code, message);
  }
}

function closeQuietly(dir: Dir): void {
  try {
    dir.closeSync();
  } catch {
    // already closed
  }
}

interface Level {
  dir: Dir;
  path: string;
  rel: string;
  id: string;
}

/**
 * Open a folder for listing; a coded error when it cannot be. Synchronous, as are the reads and
 * stats of the walk: each costs microseconds, where a threadpool round trip per folder made the
 * walk of 10⁴ empty folders take 3 s on a loaded 2-core machine.
 */
function openFolder(path: string): Dir {
  try {
    return opendirSync(path, { bufferSize: DIR_BATCH_ENTRIES });
  } catch (e) {
    throw ioError(e, path);
  }
}

/** Is `dir` an execution (holds `.hankweave` as a directory, or as a link: a broken one)? */
function executionMarker(dir: string): "dir" | "link" | null {
  try {
    const st = lstatSync(joinPath(dir, HANKWEAVE_DIR));
    if (st.isDirectory()) return "dir";
    return st.isSymbolicLink() ? "link" : null;
  } catch {
    return null;
  }
}

/**
 * Every execution directory under `root` (and `root` itself), streaming; see the module comment
 * for the guarantees. Throws FLEET_ROOT_INVALID when `root` is missing or not a directory.
 */
export async function* discoverExecutions(root: string, opts: DiscoverOptions = {}): AsyncGenerator<FleetEntry> {
  const maxDepth = opts.maxDepth ?? DISCOVER_MAX_DEPTH;
  if (!Number.isInteger(maxDepth) || maxDepth < 0) throw new RangeError(`maxDepth must be a non-negative integer, got ${maxDepth}`);
  const top = resolvePath(root).replace(/\/+$/, "") || "/";
  let st: Stats;
  try {
    // The root itself may be a link the user named; nothing below it is followed.
    st = await fsp.stat(top);
  } catch (e) {
    const c = (e as NodeJS.ErrnoException).code;
    if (c === "ENOENT" || c === "ENOTDIR") {
      throw new JournalError("FLEET_ROOT_INVALID", `fleet root ${top} does not exist`, { path: top }, { hint: "give a directory that holds execution directories" });
    }
    throw ioError(e, top);
  }
  if (!st.isDirectory()) {
    throw new JournalError("FLEET_ROOT_INVALID", `fleet root ${top} is not a directory`, { path: top, actual: "file" }, {
      hint: "give the folder that holds the execution directories (one execution: use the command without --all)",
    });
  }
  const stack: Level[] = [];
  const ancestors = new Set<string>();
  let folders = 0;
  // Enter `path`: report it when it is an execution, then push its handle (null when it cannot be searched).
  const enter = async function* (path: string, rel: string, id: string, depth: number): AsyncGenerator<FleetEntry> {
    const marker = executionMarker(path);
    if (marker === "dir") yield await classifyExecution(path, rel);
    else if (marker === "link") yield brokenEntry(path, rel, true, "SYMLINK_REFUSED", `${joinPath(path, HANKWEAVE_DIR)} is a symbolic link (never followed)`);
    if (depth > maxDepth) {
      yield brokenEntry(path, rel, false, "FLEET_TOO_DEEP", `${path} is ${depth} folders below the root, deeper than the bound ${maxDepth}: not searched`);
      return;
    }
    let dir: Dir;
    try {
      dir = openFolder(path);
    } catch (e) {
      if (depth === 0) throw e;
      // Reported once, as the folder: whether it held an execution cannot be known.
      if (marker === null) {
        const { code, message } = codeOf(e, path);
        yield brokenEntry(path, rel, false, code, message);
      }
      return;
    }
    stack.push({ dir, path, rel, id });
    ancestors.add(id);
  };
  try {
    yield* enter(top, ".", `${st.dev}:${st.ino}`, 0);
    while (stack.length > 0) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const level = stack[stack.length - 1]!;
      let ent;
      try {
        ent = level.dir.readSync();
      } catch (e) {
        const { code, message } = codeOf(e, level.path);
        yield brokenEntry(level.path, level.rel, false, code, message);
        ent = null;
      }
      if (ent === null) {
        stack.pop();
        ancestors.delete(level.id);
        closeQuietly(level.dir);
        opts.onFolder?.(++folders);
        continue;
      }
      // Symbolic links are never entered (Dirent types come from lstat semantics); `.hankweave` never.
      if (ent.name === HANKWEAVE_DIR) continue;
      let isDir = ent.isDirectory();
      if (!isDir && !ent.isSymbolicLink() && !ent.isFile() && !ent.isFIFO() && !ent.isSocket() && !ent.isCharacterDevice() && !ent.isBlockDevice()) {
        // Unknown type (some file systems): ask lstat.
        try {
          isDir = lstatSync(joinPath(level.path, ent.name)).isDirectory();
        } catch {
          isDir = false;
        }
      }
      if (!isDir) continue;
      const path = joinPath(level.path, ent.name);
      const rel = level.rel === "." ? ent.name : `${level.rel}/${ent.name}`;
      let id: string;
      try {
        const cst = lstatSync(path);
        if (!cst.isDirectory()) continue;
        id = `${cst.dev}:${cst.ino}`;
      } catch (e) {
        const { code, message } = codeOf(e, path);
        yield brokenEntry(path, rel, false, code, message);
        continue;
      }
      if (ancestors.has(id)) continue;
      yield* enter(path, rel, id, stack.length);
    }
  } finally {
    for (const level of stack) closeQuietly(level.dir);
  }
}
