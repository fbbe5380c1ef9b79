/**
 * The bench's child process: runs ONE operation (ours through the CLI or the library, or a node
 * baseline) and prints `{"ms": …, "exit": …, "detail": …}` as its last stdout line. Timing is taken
 * inside the child around the operation only (module loading and tsx compilation excluded), so a
 * 1 s tsx start-up does not count against a 0.3 s operation; peak RSS is measured by the parent
 * (`/usr/bin/time`) and does include the node + tsx floor (reported by the `noop` op).
 *
 * usage: node --import tsx tools/src/bench/runner.ts '<json RunnerSpec>'
 * (the bench runs it as the esbuild bundle tools/dist/bench-runner.mjs, see measure.ts prepareRunner)
 */
import { closeSync, fsyncSync, openSync, readFileSync, readSync, rmSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import { evolve, initialState, type StateTransition } from "@hankweave-journal/core";

/** What the parent asks the runner to do. */
export type RunnerSpec =
  | { op: "noop" }
  | { op: "cli"; argv: string[] }
  | { op: "read"; exec: string }
  | { op: "line"; exec: string; line: number }
  | { op: "append"; exec: string; source: string; durability: "none" | "batch" | "every"; count: number }
  | { op: "raw-append"; file: string; source: string; fsync: boolean; count: number }
  | { op: "naive-fold"; journal: string }
  | { op: "fold-stdin" }
  | { op: "sqlite-naive"; journal: string; db: string }
  | { op: "diet"; exec: string; mode: "compatible" | "extended" }
  | { op: "restore"; exec: string }
  /** DuckDB's own reader over raw journals (`read_json` of a glob, envelope columns + data as JSON) into one Parquet file. */
  | { op: "duckdb-read-json"; glob: string; out: string };

/** The runner's answer (last stdout line). */
export interface RunnerResult {
  ms: number;
  exit: number;
  detail?: Record<string, unknown>;
}

const NL = 10;

/** Read at most the first 64 MB of the source (enough for the appended prefix). */
const APPEND_SOURCE_MAX_BYTES = 64 * 1024 * 1024;

/** The first `count` non-transition events of a journal, parsed before the clock starts. */
function firstEvents(source: string, count: number): { type: string; data: unknown; id: string; timestamp: string }[] {
  const fd = openSync(source, "r");
  const buf = Buffer.allocUnsafe(APPEND_SOURCE_MAX_BYTES);
  let n = 0;
  try {
    for (;;) {
      const r = readSync(fd, buf, n, buf.length - n, n);
      if (r === 0 || n + r === buf.length) {
        n += r;
        break;
      }
      n += r;
    }
  } finally {
    closeSync(fd);
  }
  const out: { type: string; data: unknown; id: string; timestamp: string }[] = [];
  let from = 0;
  while (out.length < count) {
    const nl = buf.indexOf(NL, from);
    if (nl < 0 || nl >= n) break;
    const e = JSON.parse(buf.toString("utf8", from, nl));
    if (e.type !== "state.transition" && e.type !== "plan.updated") out.push(e);
    from = nl + 1;
  }
  return out;
}

/** Naive fold: whole file in memory, split every line, JSON.parse ALL, reduce the transitions. */
function naiveFold(journal: string): Record<string, unknown> {
  // A Buffer, not a string: V8 strings stop at ~512 MB, so a 1 GB journal cannot be one string.
  const buf = readFileSync(journal);
  let state = initialState();
  let from = 0;
  let parsed = 0;
  for (;;) {
    const nl = buf.indexOf(NL, from);
    if (nl < 0) break;
    if (nl > from) {
      const e = JSON.parse(buf.toString("utf8", from, nl)) as { type: string; timestamp: string; data: { transition?: StateTransition } };
      parsed += 1;
      if (e.type === "state.transition" && e.data.transition) state = evolve(state, e.data.transition, e.timestamp);
      else if (e.type === "plan.updated") state = { ...state, executionPlan: (e.data as unknown as { plan: typeof state.executionPlan }).plan };
    }
    from = nl + 1;
  }
  const text = JSON.stringify(state, null, 2);
  return { parsed, stateBytes: text.length, stateSha256: createHash("sha256").update(text).digest("hex") };
}

async function foldStdin(): Promise<Record<string, unknown>> {
  let state = initialState();
  let n = 0;
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.length === 0) continue;
    const e = JSON.parse(line) as { timestamp: string; data: { transition: StateTransition } };
    state = evolve(state, e.data.transition, e.timestamp);
    n += 1;
  }
  return { transitions: n, stateBytes: JSON.stringify(state, null, 2).length };
}

async function sqliteNaive(journal: string, db: string): Promise<Record<string, unknown>> {
  const { default: Database } = await import("better-sqlite3");
  rmSync(db, { force: true });
  const d = new Database(db);
  d.pragma("journal_mode = WAL");
  d.exec("CREATE TABLE events (line INTEGER PRIMARY KEY, offset INTEGER, id TEXT, ts TEXT, type TEXT, run TEXT, codon TEXT)");
  const ins = d.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)");
  const buf = readFileSync(journal);
  let line = 0;
  let from = 0;
  const tx = d.transaction(() => {
    for (;;) {
      const nl = buf.indexOf(NL, from);
      if (nl < 0) break;
      const e = JSON.parse(buf.toString("utf8", from, nl)) as { id: string; timestamp: string; type: string; data: Record<string, unknown> };
      ins.run(line, from, e.id, e.timestamp, e.type, (e.data?.runId as string) ?? null, (e.data?.codonId as string) ?? null);
      line += 1;
      from = nl + 1;
    }
  });
  tx();
  d.close();
  return { rows: line };
}

async function run(spec: RunnerSpec): Promise<RunnerResult> {
  switch (spec.op) {
    case "noop":
      return { ms: 0, exit: 0 };
    case "cli": {
      const { runCli } = await import("@hankweave-journal/cli");
      let outBytes = 0;
      let err = "";
      const hash = createHash("sha256");
      const io = {
        stdout: (c: string | Uint8Array) => {
          outBytes += typeof c === "string" ? Buffer.byteLength(c) : c.length;
          hash.update(c);
        },
        stderr: (c: string) => {
          if (err.length < 2000) err += c;
        },
        stderrIsTTY: false, noColor: true, env: {}, cwd: process.cwd(), signal: new AbortController().signal,
      };
      const t = performance.now();
      const exit = await runCli(spec.argv, io);
      const ms = performance.now() - t;
      return { ms, exit, detail: { outBytes, stdoutSha256: hash.digest("hex"), stderr: err.slice(0, 500) } };
    }
    case "read": {
      const { openReader } = await import("@hankweave-journal/diet");
      const t = performance.now();
      const r = await openReader(spec.exec);
      let n = 0;
      for await (const _ of r.events({ onFinding: () => undefined })) n += 1;
      await r.close();
      return { ms: performance.now() - t, exit: 0, detail: { events: n } };
    }
    case "line": {
      const { openReader } = await import("@hankweave-journal/diet");
      const t = performance.now();
      const r = await openReader(spec.exec);
      const rec = await r.getLine(spec.line);
      await r.close();
      return { ms: performance.now() - t, exit: rec ? 0 : 1, detail: { bytes: rec?.bytes.length ?? 0 } };
    }
    case "append": {
      const { openJournalWriter } = await import("@hankweave-journal/journal");
      const events = firstEvents(spec.source, spec.count);
      const t = performance.now();
      const w = await openJournalWriter(spec.exec, { durability: spec.durability });
      // Submitted as a busy runtime does (no await between events): the writer serializes and group-commits.
      const acks = events.map((e) => w.append(e));
      let bytes = 0;
      for (const a of await Promise.all(acks)) bytes += a.bytes;
      await w.close();
      return { ms: performance.now() - t, exit: 0, detail: { events: events.length, bytes } };
    }
    case "raw-append": {
      const events = firstEvents(spec.source, spec.count);
      const t = performance.now();
      const fd = openSync(spec.file, "a");
      let bytes = 0;
      for (const e of events) {
        // Serialization is inside the clock, as it is for ours (a writer must stringify the event).
        const l = Buffer.from(`${JSON.stringify(e)}\n`);
        writeSync(fd, l);
        if (spec.fsync) fsyncSync(fd);
        bytes += l.length;
      }
      closeSync(fd);
      return { ms: performance.now() - t, exit: 0, detail: { events: events.length, bytes } };
    }
    case "naive-fold": {
      const t = performance.now();
      const d = naiveFold(spec.journal);
      return { ms: performance.now() - t, exit: 0, detail: d };
    }
    case "fold-stdin": {
      const t = performance.now();
      const d = await foldStdin();
      return { ms: performance.now() - t, exit: 0, detail: d };
    }
    case "sqlite-naive": {
      const t = performance.now();
      const d = await sqliteNaive(spec.journal, spec.db);
      return { ms: performance.now() - t, exit: 0, detail: d };
    }
    case "diet": {
      const { applyDiet } = await import("@hankweave-journal/diet");
      const t = performance.now();
      const r = await applyDiet(spec.exec, { kind: spec.mode });
      return { ms: performance.now() - t, exit: 0, detail: { storedBytes: r.stored.totalBytes, bodies: r.bodies } };
    }
    case "restore": {
      const { restoreJournal } = await import("@hankweave-journal/diet");
      const t = performance.now();
      const r = await restoreJournal(spec.exec);
      return { ms: performance.now() - t, exit: 0, detail: { status: r.status } };
    }
    case "duckdb-read-json": {
      const { DuckDBInstance } = await import("@duckdb/node-api");
      const lit = (x: string): string => `'${x.replace(/'/g, "''")}'`;
      const db = await DuckDBInstance.create(":memory:", { threads: "2" });
      const conn = await db.connect();
      const t = performance.now();
      // The same envelope columns the export writes, data kept as JSON text; lines of any size.
      await conn.run(
        `COPY (SELECT filename AS file, id, timestamp, type, data FROM read_json(${lit(spec.glob)}, format = 'newline_delimited', ` +
          `columns = {id: 'VARCHAR', timestamp: 'VARCHAR', type: 'VARCHAR', data: 'JSON'}, filename = true, maximum_object_size = 1073741824)) ` +
          `TO ${lit(spec.out)} (FORMAT parquet)`,
      );
      const ms = performance.now() - t;
      const rows = (await (await conn.run(`SELECT count(*)::BIGINT FROM read_parquet(${lit(spec.out)})`)).getRowsJS())[0]![0];
      conn.closeSync();
      return { ms, exit: 0, detail: { rows: Number(rows) } };
    }
  }
}

const spec = JSON.parse(process.argv[2] ?? '{"op":"noop"}') as RunnerSpec;
try {
  const r = await run(spec);
  process.stdout.write(`\n${JSON.stringify(r)}\n`);
} catch (e) {
  const err = e as { code?: string; message?: string };
  process.stdout.write(`\n${JSON.stringify({ ms: 0, exit: 99, detail: { error: `${err.code ?? "ERROR"}: ${err.message ?? String(e)}`.slice(0, 500) } })}\n`);
}
