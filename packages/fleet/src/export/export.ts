/**
 * `export <exec|root> -o <dir>`: the tables of `schema.ts` for one execution or every execution
 * under a root, as Parquet (through embedded DuckDB) or NDJSON files partitioned Hive-style by
 * execution (docs/fleet-export.md):
 *
 *   <dir>/_export.json                          format, schema version, schema (column, type, meaning)
 *   <dir>/_executions/<id>.json                 one manifest per execution: path, journal fingerprint, files
 *   <dir>/<table>/execution=<id>/data.parquet   (or data.ndjson) one file per table and execution
 *   <dir>/_tmp/                                 temps (pid-named; a dead process's are swept)
 *
 * Guarantees:
 * - Incremental: an execution whose fingerprint (the stat of every file of its events/ directory
 *   but the CAS: name, size, inode, mtime), schema version, format and payload choice equal its
 *   manifest's, and whose files all exist, is skipped without opening its journal.
 * - Atomic per partition file: each is written to a temp in `<dir>/_tmp/`, fsynced, renamed over
 *   the old file and its directory fsynced (durable-file.ts); a reader sees the old or the new
 *   complete file, never a part. The manifest is written last, so an export cut short is redone.
 * - Per-execution errors (a broken journal, a missing blob, an unreadable folder) are reported in
 *   the summary with their code and never stop the others; the journals are only read.
 * - Executions of a root that have a manifest but were not found again are reported `removed`,
 *   and their partitions deleted only with `prune`.
 * - The output directory is never inside an execution's `.hankweave/` nor inside an exported
 *   execution (OUTPUT_IN_EXECUTION), and must be empty or an export (EXPORT_DIR_INVALID).
 */
import { createHash } from "node:crypto";
import * as fsp from "node:fs/promises";
import path from "node:path";
import { JournalError, isJournalError, resolveExec, type ErrorCode, type ExecLayout, type ExecRef } from "@hankweave-journal/core";
import { createTemp, errnoOf, fsyncDir, fsyncFile, ioError, isInsideHankweave, publishTemp, removeQuietly, writeFileDurable } from "@hankweave-journal/journal";
import type { DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { mapConcurrent } from "../pool.js";
import { duckdb, sqlString } from "./duckdb.js";
import { foldExecutionRows, type FoldCounts, type Row, type RowSink } from "./rows.js";
import { EXPORT_SCHEMA_VERSION, EXPORT_TABLES, duckdbColumns, schemaJson, type ExportTable } from "./schema.js";

export type ExportFormat = "parquet" | "ndjson";

/** The file name of every partition, by format. */
export const PARTITION_FILE: Record<ExportFormat, string> = { parquet: "data.parquet", ndjson: "data.ndjson" };
export const EXPORT_META_FILE = "_export.json";
export const MANIFESTS_DIR = "_executions";
export const TEMP_DIR = "_tmp";
/** Default of `jobs`. */
export const EXPORT_JOBS = 2;

/** One execution to export (or one found broken by discovery). */
export interface ExportTarget {
  /** Absolute path of the execution directory. */
  exec: string;
  /** Path relative to the exported root, `/`-separated; `.` for the root itself. */
  rel: string;
  /** Discovery found it broken (or could not search it): reported failed with this code. */
  broken?: { code: ErrorCode; message: string };
  /** Discovery found no journal: reported skipped. */
  empty?: boolean;
}

export interface ExportOptions {
  format: ExportFormat;
  /** Fill events.payload with each line. */
  payloads?: boolean;
  /** Delete the partitions of executions of this root that were not found again. */
  prune?: boolean;
  /** Executions exported at the same time (default EXPORT_JOBS): one folds while DuckDB writes another's Parquet. */
  jobs?: number;
  /** The exported root (absolute), or null when one execution was named. */
  root: string | null;
  signal?: AbortSignal;
  /** Called after each execution (progress). */
  onExecution?: (r: ExecutionResult) => void;
  /** Tests: called after each partition file is published. */
  afterPartition?: (table: ExportTable, id: string) => void | Promise<void>;
}

export type ExecutionStatus = "written" | "skipped" | "failed" | "removed" | "pruned";

/** What happened to one execution. */
export interface ExecutionResult {
  id: string;
  path: string;
  status: ExecutionStatus;
  /** Why skipped ("unchanged", "no journal") or null. */
  reason: string | null;
  code: ErrorCode | null;
  message: string | null;
  /** Rows written per table (written only). */
  rows: Record<ExportTable, number> | null;
  /** Bytes of the partition files written. */
  bytes: number;
}

export interface ExportSummary {
  out: string;
  format: ExportFormat;
  schemaVersion: number;
  written: number;
  skipped: number;
  failed: number;
  removed: number;
  executions: ExecutionResult[];
}

/** What `_executions/<id>.json` holds. */
export interface ExecutionManifest {
  schemaVersion: number;
  format: ExportFormat;
  id: string;
  path: string;
  /** The absolute root it was exported under (null: exported on its own). */
  root: string | null;
  /** The absolute execution directory when exported. */
  exec: string;
  fingerprint: string;
  payloads: boolean;
  kind: "plain" | "dieted";
  exportedAt: string;
  tables: Record<ExportTable, { file: string; rows: number; bytes: number }>;
}

const SAFE = /[^A-Za-z0-9._-]+/g;

/**
 * The id of an execution: `<name>-<12 hex>` where name is the directory's base name reduced to
 * `[A-Za-z0-9._-]` (at most 40 characters; `x` when nothing is left) and the hex is SHA-256 of
 * the identity string: the path relative to the exported root (root export) or the absolute
 * path (one execution exported). Stable across runs, unique per identity, safe as a path segment
 * and as a Hive partition value (no `/`, `=`, spaces, nor a leading dot).
 */
export function executionId(exec: ExecRef, identity: string): string {
  const name = path.basename(resolveExec(exec).exec).replace(SAFE, "_").replace(/^[._-]+/, "").slice(0, 40) || "x";
  return `${name}-${createHash("sha256").update(identity).digest("hex").slice(0, 12)}`;
}

/**
 * The journal's fingerprint: every entry of `events/` but the CAS (name, type, size, inode,
 * mtime in ns), sorted. A dieted journal's CAS blobs are content-addressed and only added with
 * the pointer journal that names them, so the pointer journal's stat covers them.
 */
export async function journalFingerprint(exec: ExecRef): Promise<string> {
  const layout = resolveExec(exec);
  const dir = layout.eventsDir;
  const cas = path.basename(layout.casDir);
  const parts: string[] = [];
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch (e) {
    // No events/ directory: the reader says why (EXEC_NOT_FOUND, JOURNAL_NOT_FOUND).
    if (errnoOf(e) === "ENOENT" || errnoOf(e) === "ENOTDIR") return "absent";
    throw ioError(e, dir);
  }
  for (const name of names.sort()) {
    if (name === cas) continue;
    const st = await fsp.lstat(path.join(dir, name), { bigint: true });
    parts.push(`${name}:${st.isFile() ? "f" : st.isDirectory() ? "d" : "o"}:${st.size}:${st.ino}:${st.mtimeNs}`);
  }
  return createHash("sha256").update(parts.join("\n")).digest("hex");
}

/** `_export.json`. */
interface ExportMeta {
  tool: "hankweave-journal";
  schemaVersion: number;
  format: ExportFormat;
  partitioning: string;
  tables: ReturnType<typeof schemaJson>;
}

async function readJson(p: string): Promise<unknown> {
  try {
    return JSON.parse(await fsp.readFile(p, "utf8")) as unknown;
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return undefined;
    return null;
  }
}

function invalidDir(out: string, message: string, hint?: string): JournalError {
  return new JournalError("EXPORT_DIR_INVALID", message, { path: out }, { hint: hint ?? "name an empty or new directory, or an earlier export's directory" });
}

/**
 * Check and create the output directory `userPath` (resolved against `cwd`): never inside an
 * execution's `.hankweave/` nor inside one of `execs` (OUTPUT_IN_EXECUTION); an existing path
 * must be a directory that is empty or holds `_export.json` (EXPORT_DIR_INVALID). Returns its real path.
 */
export async function prepareExportDir(userPath: string, cwd: string, execs: string[]): Promise<string> {
  if (userPath.length === 0 || userPath === "-") throw new JournalError("USAGE", "export -o needs a directory (Parquet and NDJSON exports are directories)");
  const abs = path.resolve(cwd, userPath);
  const hint = "write the export outside every execution directory";
  const inside = (p: string): boolean => isInsideHankweave(p) || execs.some((x) => p === x || p.startsWith(x + path.sep));
  if (inside(abs)) throw new JournalError("OUTPUT_IN_EXECUTION", `refusing to write the export into ${abs}: it is inside an execution`, { path: abs }, { hint });
  try {
    await fsp.mkdir(abs, { recursive: true });
  } catch (e) {
    if (errnoOf(e) === "EEXIST" || errnoOf(e) === "ENOTDIR") throw invalidDir(abs, `${abs} exists and is not a directory`);
    throw ioError(e, abs);
  }
  const real = await fsp.realpath(abs).catch((e: unknown) => {
    throw ioError(e, abs);
  });
  const realExecs = await Promise.all(execs.map((x) => fsp.realpath(x).catch(() => x)));
  if (isInsideHankweave(real) || realExecs.some((x) => real === x || real.startsWith(x + path.sep))) {
    throw new JournalError("OUTPUT_IN_EXECUTION", `refusing to write the export into ${abs}: it resolves to ${real}, inside an execution`, { path: abs, actual: real }, { hint });
  }
  const st = await fsp.stat(real);
  if (!st.isDirectory()) throw invalidDir(abs, `${abs} is not a directory`);
  const entries = await fsp.readdir(real);
  if (entries.length > 0 && !entries.includes(EXPORT_META_FILE)) {
    throw invalidDir(abs, `${abs} is neither empty nor an export (no ${EXPORT_META_FILE}); refusing to write into it`);
  }
  return real;
}

/** Rows to one NDJSON temp file per table, buffered (≈1 MB writes). */
class NdjsonTables implements RowSink {
  readonly rows = Object.fromEntries(EXPORT_TABLES.map((t) => [t, 0])) as Record<ExportTable, number>;
  /** Longest line per table (DuckDB's read_json needs maximum_object_size above it). */
  readonly longest = Object.fromEntries(EXPORT_TABLES.map((t) => [t, 0])) as Record<ExportTable, number>;
  private readonly buf = Object.fromEntries(EXPORT_TABLES.map((t) => [t, [] as string[]])) as Record<ExportTable, string[]>;
  private readonly bufChars = Object.fromEntries(EXPORT_TABLES.map((t) => [t, 0])) as Record<ExportTable, number>;
  private pending = 0;

  private constructor(private readonly files: Record<ExportTable, fsp.FileHandle>) {}

  static async open(paths: Record<ExportTable, string>): Promise<NdjsonTables> {
    const files: Partial<Record<ExportTable, fsp.FileHandle>> = {};
    try {
      for (const t of EXPORT_TABLES) files[t] = await createTemp(paths[t]);
    } catch (e) {
      for (const fh of Object.values(files)) await fh.close();
      throw e;
    }
    return new NdjsonTables(files as Record<ExportTable, fsp.FileHandle>);
  }

  write(table: ExportTable, row: Row): void {
    const s = JSON.stringify(row);
    this.rows[table] += 1;
    if (s.length > this.longest[table]) this.longest[table] = s.length;
    this.buf[table].push(s, "\n");
    this.bufChars[table] += s.length + 1;
    this.pending += s.length + 1;
  }

  async drain(): Promise<void> {
    if (this.pending >= 1 << 20) await this.flush();
  }

  async flush(): Promise<void> {
    for (const t of EXPORT_TABLES) {
      if (this.bufChars[t] === 0) continue;
      const b = Buffer.from(this.buf[t].join(""), "utf8");
      this.buf[t] = [];
      this.bufChars[t] = 0;
      await this.files[t].write(b);
    }
    this.pending = 0;
  }

  /** Flush, fsync when asked, close. */
  async close(sync: boolean): Promise<void> {
    try {
      await this.flush();
      if (sync) for (const t of EXPORT_TABLES) await this.files[t].sync();
    } finally {
      for (const t of EXPORT_TABLES) await this.files[t].close().catch(() => undefined);
    }
  }
}

/** True when process `pid` is alive (or we cannot tell). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoOf(e) !== "ESRCH";
  }
}

const TEMP_NAME = /\.(\d+)\.tmp(\.[a-z]+)?$/;

/** Remove temps of `dir` left by processes that are gone (a SIGKILLed export). */
async function sweepDeadTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await fsp.readdir(dir);
  } catch {
    return;
  }
  for (const n of names) {
    const m = TEMP_NAME.exec(n);
    if (m && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await removeQuietly(path.join(dir, n));
  }
}

function codeOf(e: unknown, path: string): { code: ErrorCode; message: string } {
  if (isJournalError(e)) return { code: e.code, message: e.message };
  if (errnoOf(e) !== undefined) {
    const j = ioError(e, path);
    return { code: j.code, message: j.message };
  }
  return { code: "EXPORT_FAILED", message: String((e as Error)?.message ?? e) };
}

/** A DuckDB connection of a Parquet export (one in-memory database per call, one connection per job). */
interface Duck {
  conn: DuckDBConnection;
}

/**
 * Export `targets` into the prepared directory `out` (see the module comment). Never throws for
 * one execution's failure (it is in the summary); throws EXPORT_DIR_INVALID when `out` holds an
 * export of another format or a newer schema, NATIVE_MODULE_UNAVAILABLE for Parquet without DuckDB.
 * @example const s = await exportExecutions(out, [{ exec: "/runs/x", rel: "." }], { format: "parquet", root: null });
 */
export async function exportExecutions(out: string, targets: AsyncIterable<ExportTarget> | Iterable<ExportTarget>, opts: ExportOptions): Promise<ExportSummary> {
  const format = opts.format;
  const meta = await readJson(path.join(out, EXPORT_META_FILE));
  if (meta === null || (meta !== undefined && (typeof meta !== "object" || typeof (meta as ExportMeta).schemaVersion !== "number"))) {
    throw invalidDir(out, `${path.join(out, EXPORT_META_FILE)} is not valid: not an export directory this version can update`);
  }
  const old = meta as ExportMeta | undefined;
  if (old && old.format !== format) throw invalidDir(out, `${out} holds a ${old.format} export; refusing to mix in ${format}`, `export with --format ${old.format}, or into another directory`);
  if (old && old.schemaVersion > EXPORT_SCHEMA_VERSION) throw invalidDir(out, `${out} holds an export of schema version ${old.schemaVersion}, newer than this version's ${EXPORT_SCHEMA_VERSION}`, "use the newer hankweave-journal, or another directory");
  const jobs = opts.jobs ?? EXPORT_JOBS;
  if (!Number.isInteger(jobs) || jobs < 1) throw new RangeError(`jobs must be a positive integer, got ${jobs}`);
  let instance: DuckDBInstance | null = null;
  const free: (Duck | null)[] = [];
  if (format === "parquet") {
    const { DuckDBInstance } = duckdb();
    instance = await DuckDBInstance.create(":memory:", { threads: "2" });
    for (let i = 0; i < jobs; i++) free.push({ conn: await instance.connect() });
  } else for (let i = 0; i < jobs; i++) free.push(null);
  const conns = [...free];
  const tmpDir = path.join(out, TEMP_DIR);
  const manDir = path.join(out, MANIFESTS_DIR);
  try {
    for (const d of [tmpDir, manDir, ...EXPORT_TABLES.map((t) => path.join(out, t))]) await fsp.mkdir(d, { recursive: true }).catch((e: unknown) => { throw ioError(e, d); });
    await sweepDeadTemps(tmpDir);
    if (!old || old.schemaVersion !== EXPORT_SCHEMA_VERSION) {
      const m: ExportMeta = { tool: "hankweave-journal", schemaVersion: EXPORT_SCHEMA_VERSION, format, partitioning: "<table>/execution=<id>/" + PARTITION_FILE[format], tables: schemaJson() };
      await writeFileDurable(path.join(out, EXPORT_META_FILE), JSON.stringify(m, null, 2) + "\n", { tmp: path.join(out, `${EXPORT_META_FILE}.${process.pid}.tmp`) });
    }
    const done: { n: number; r: ExecutionResult }[] = [];
    const seen = new Set<string>();
    let n = 0;
    async function* numbered(): AsyncGenerator<{ n: number; t: ExportTarget }> {
      for await (const t of targets) yield { n: n++, t };
    }
    const work = mapConcurrent(numbered(), jobs, async ({ n: k, t }) => {
      const duck = free.pop()!;
      try {
        return { n: k, r: await exportOne(out, t, opts, duck, old?.schemaVersion ?? EXPORT_SCHEMA_VERSION) };
      } finally {
        free.push(duck);
      }
    }, opts.signal);
    for await (const x of work) {
      seen.add(x.r.id);
      done.push(x);
      opts.onExecution?.(x.r);
    }
    if (opts.signal?.aborted) throw opts.signal.reason;
    const results = done.sort((a, b) => a.n - b.n).map((x) => x.r);
    if (opts.root !== null) {
      for (const r of await removedExecutions(out, opts.root, seen)) {
        if (opts.prune) await pruneExecution(out, r.id);
        const res: ExecutionResult = { ...r, status: opts.prune ? "pruned" : "removed" };
        results.push(res);
        opts.onExecution?.(res);
      }
    }
    const count = (s: ExecutionStatus[]): number => results.filter((r) => s.includes(r.status)).length;
    return {
      out, format, schemaVersion: EXPORT_SCHEMA_VERSION, written: count(["written"]), skipped: count(["skipped"]), failed: count(["failed"]),
      removed: count(["removed", "pruned"]), executions: results,
    };
  } finally {
    for (const c of conns) c?.conn.closeSync();
    instance?.closeSync();
  }
}

function isManifest(x: unknown): x is ExecutionManifest {
  const m = x as ExecutionManifest;
  return typeof m === "object" && m !== null && typeof m.id === "string" && typeof m.fingerprint === "string" && typeof m.tables === "object" && m.tables !== null;
}

async function readManifestFile(out: string, id: string): Promise<ExecutionManifest | undefined> {
  const m = await readJson(path.join(out, MANIFESTS_DIR, `${id}.json`));
  return isManifest(m) ? m : undefined;
}

/** Manifests of executions of `root` whose id is not in `seen`. */
async function removedExecutions(out: string, root: string, seen: Set<string>): Promise<ExecutionResult[]> {
  const found: ExecutionResult[] = [];
  for (const n of (await fsp.readdir(path.join(out, MANIFESTS_DIR))).sort()) {
    if (!n.endsWith(".json")) continue;
    const m = await readManifestFile(out, n.slice(0, -5));
    if (!m || m.root !== root || seen.has(m.id)) continue;
    found.push({ id: m.id, path: m.path, status: "removed", reason: "not found under the root any more", code: null, message: null, rows: null, bytes: 0 });
  }
  return found;
}

async function pruneExecution(out: string, id: string): Promise<void> {
  for (const t of EXPORT_TABLES) {
    const dir = path.join(out, t, `execution=${id}`);
    await fsp.rm(dir, { recursive: true, force: true }).catch((e: unknown) => { throw ioError(e, dir); });
    await fsyncDir(path.join(out, t));
  }
  await fsp.rm(path.join(out, MANIFESTS_DIR, `${id}.json`), { force: true });
  await fsyncDir(path.join(out, MANIFESTS_DIR));
}

async function partitionsPresent(out: string, m: ExecutionManifest): Promise<boolean> {
  for (const t of EXPORT_TABLES) {
    const f = m.tables[t]?.file;
    if (typeof f !== "string") return false;
    const st = await fsp.stat(path.join(out, f)).catch(() => undefined);
    if (!st?.isFile() || st.size !== m.tables[t].bytes) return false;
  }
  return true;
}

async function exportOne(out: string, t: ExportTarget, opts: ExportOptions, duck: Duck | null, oldSchema: number): Promise<ExecutionResult> {
  const rel = t.rel;
  const id = executionId(t.exec, opts.root === null ? t.exec : rel);
  const base = { id, path: opts.root === null ? path.basename(t.exec) : rel, code: null, message: null, rows: null, bytes: 0 };
  if (t.broken) return { ...base, status: "failed", reason: null, code: t.broken.code, message: t.broken.message };
  if (t.empty) return { ...base, status: "skipped", reason: "no journal", code: "JOURNAL_NOT_FOUND", message: null };
  try {
    const layout = resolveExec(t.exec);
    const fingerprint = await journalFingerprint(layout);
    const m = await readManifestFile(out, id);
    const payloads = opts.payloads === true;
    if (m && oldSchema === EXPORT_SCHEMA_VERSION && m.schemaVersion === EXPORT_SCHEMA_VERSION && m.format === opts.format && m.fingerprint === fingerprint
      && m.payloads === payloads && await partitionsPresent(out, m)) {
      return { ...base, status: "skipped", reason: "unchanged" };
    }
    const w = await writePartitions(out, layout, { id, path: base.path }, fingerprint, opts, duck);
    const manifest: ExecutionManifest = {
      schemaVersion: EXPORT_SCHEMA_VERSION, format: opts.format, id, path: base.path, root: opts.root, exec: t.exec, fingerprint, payloads,
      kind: w.counts.kind, exportedAt: new Date().toISOString(), tables: w.tables,
    };
    const final = path.join(out, MANIFESTS_DIR, `${id}.json`);
    await writeFileDurable(final, JSON.stringify(manifest, null, 2) + "\n", { tmp: path.join(out, TEMP_DIR, `manifest-${id}.${process.pid}.tmp`) });
    const rows = Object.fromEntries(EXPORT_TABLES.map((tb) => [tb, w.tables[tb].rows])) as Record<ExportTable, number>;
    return { ...base, status: "written", reason: null, rows, bytes: EXPORT_TABLES.reduce((s, tb) => s + w.tables[tb].bytes, 0) };
  } catch (e) {
    if (opts.signal?.aborted && e === opts.signal.reason) throw e;
    if (isJournalError(e) && e.code === "NATIVE_MODULE_UNAVAILABLE") throw e;
    return { ...base, status: "failed", reason: null, ...codeOf(e, t.exec) };
  }
}

/** Write the four partition files of one execution (temps, then rename each into place). */
async function writePartitions(
  out: string, exec: ExecLayout, x: { id: string; path: string }, fingerprint: string, opts: ExportOptions, duck: Duck | null,
): Promise<{ counts: FoldCounts; tables: ExecutionManifest["tables"] }> {
  const tmpDir = path.join(out, TEMP_DIR);
  const ndjson = Object.fromEntries(EXPORT_TABLES.map((t) => [t, path.join(tmpDir, `${t}-${x.id}.${process.pid}.tmp.ndjson`)])) as Record<ExportTable, string>;
  const temps: string[] = Object.values(ndjson);
  try {
    const sink = await NdjsonTables.open(ndjson);
    let counts: FoldCounts;
    try {
      counts = await foldExecutionRows(exec, x, sink, { payloads: opts.payloads === true, signal: opts.signal });
    } finally {
      await sink.close(opts.format === "ndjson");
    }
    const tables = {} as ExecutionManifest["tables"];
    for (const t of EXPORT_TABLES) {
      const dir = path.join(out, t, `execution=${x.id}`);
      const rel = `${t}/execution=${x.id}/${PARTITION_FILE[opts.format]}`;
      let src = ndjson[t];
      if (duck) {
        src = path.join(tmpDir, `${t}-${x.id}.${process.pid}.tmp.parquet`);
        temps.push(src);
        await removeQuietly(src);
        const kv = `{schema_version: ${sqlString(String(EXPORT_SCHEMA_VERSION))}, export_table: ${sqlString(t)}, execution_id: ${sqlString(x.id)}, journal_fingerprint: ${sqlString(fingerprint)}}`;
        const maxObject = Math.max(16 << 20, sink.longest[t] * 4 + 1024);
        await duck.conn.run(
          `COPY (SELECT * FROM read_json(${sqlString(ndjson[t])}, format='newline_delimited', columns=${duckdbColumns(t)}, maximum_object_size=${maxObject})) ` +
          `TO ${sqlString(src)} (FORMAT parquet, COMPRESSION zstd, KV_METADATA ${kv})`,
        );
        await fsyncFile(src);
      }
      const created = await fsp.mkdir(dir, { recursive: true });
      if (created !== undefined) await fsyncDir(path.join(out, t));
      await publishTemp(src, path.join(out, rel));
      const bytes = (await fsp.stat(path.join(out, rel))).size;
      tables[t] = { file: rel, rows: sink.rows[t], bytes };
      await opts.afterPartition?.(t, x.id);
    }
    return { counts, tables };
  } finally {
    for (const p of temps) await removeQuietly(p);
  }
}
