/**
 * Benchmark of audit, index and query throughput on a generated journal, beside `jq` doing the
 * same filtering, and of the index build against a plain better-sqlite3 bulk insert of the same
 * rows. Each measured step runs in its own child process under `/usr/bin/time -f %M` so peak RSS
 * is the step's own.
 *
 *   node --import tsx tools/src/bench-audit.ts [--mb 100] [--dir /tmp/x] [--json]
 *
 * With `--dir D` an existing execution at `D/exec` is used (e.g. one made by tools/src/generate.ts);
 * note that the incremental step rewrites its journal (cut at 99%, then the rest appended back).
 *
 * Keep `--mb` ≤ 100 on shared machines. Results go to stdout (a table, or one JSON object).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, appendFileSync, readFileSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { layoutOf } from "@hankweave-journal/core";
import { AuditFold, IndexWriter, SCHEMA_INDEXES_SQL, SCHEMA_TABLES_SQL, buildIndex, streamAudit, type AuditFinding, type AuditRow, type EventInfo } from "@hankweave-journal/audit";
import { openReader } from "@hankweave-journal/diet";
import { writeSyntheticExecution } from "@hankweave-journal/audit/testing";

const SELF = new URL(import.meta.url).pathname;

/** One measured step. */
interface Step {
  name: string;
  seconds: number;
  /** user + system CPU seconds (the machine may be shared: wall time can exceed it a lot). */
  cpuSeconds: number;
  peakRssMb: number;
  events?: number;
  rows?: number;
  note?: string;
}

function timed(cmd: string[], stdoutToNull = true): { seconds: number; cpuSeconds: number; peakRssMb: number; stdout: string } {
  const t = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", ...cmd], { encoding: "utf8", maxBuffer: 1 << 26, stdio: ["ignore", stdoutToNull ? "ignore" : "pipe", "pipe"] });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${cmd.join(" ")} failed: ${r.stderr}`);
  const lines = r.stderr.trim().split("\n");
  const [rssKb, user, sys] = lines[lines.length - 1].split(" ").map(Number);
  return { seconds, cpuSeconds: user + sys, peakRssMb: rssKb / 1024, stdout: r.stdout ?? "" };
}

function node(args: string[]): string[] {
  return [process.execPath, "--import", "tsx", SELF, ...args];
}

/** Child-process entry points: print one JSON line with the in-process time. */
async function child(kind: string, exec: string): Promise<void> {
  const t = performance.now();
  const cpu0 = process.cpuUsage();
  let out: Record<string, unknown> = {};
  if (kind === "audit") {
    const end = await streamAudit(exec);
    out = { events: end.events, transitions: end.transitions };
  } else if (kind === "index-full" || kind === "index-inc") {
    const r = await buildIndex(exec, { full: kind === "index-full" });
    out = { mode: r.mode, events: r.eventsAdded, transitions: r.transitionsAdded, findings: r.findingsAdded, linesRead: r.linesRead };
  } else if (kind === "naive-insert") {
    // Exactly the baseline of `npm run bench` (tools/src/bench/runner.ts, sqliteNaive): read the
    // whole file, JSON.parse every line, insert (line, offset, id, ts, type, runId, codonId).
    const file = path.join(path.dirname(layoutOf(exec).index), "naive-insert.sqlite");
    rmSync(file, { force: true });
    const d = new Database(file);
    d.pragma("journal_mode = WAL");
    d.exec("CREATE TABLE events (line INTEGER PRIMARY KEY, offset INTEGER, id TEXT, ts TEXT, type TEXT, run TEXT, codon TEXT)");
    const ins = d.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)");
    const buf = readFileSync(layoutOf(exec).journal);
    let line = 0;
    let from = 0;
    d.transaction(() => {
      for (;;) {
        const nl = buf.indexOf(10, from);
        if (nl < 0) break;
        const e = JSON.parse(buf.toString("utf8", from, nl)) as { id: string; timestamp: string; type: string; data: Record<string, unknown> };
        ins.run(line, from, e.id, e.timestamp, e.type, (e.data?.runId as string) ?? null, (e.data?.codonId as string) ?? null);
        line += 1;
        from = nl + 1;
      }
    })();
    d.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    out = { events: line };
  } else if (kind === "insert-compare") {
    // The same rows (the fold's output for this journal) inserted twice into fresh databases with
    // the same schema and pragmas: once through the index's IndexWriter sink, once as plain
    // positional arrays with a prepared INSERT per table, one transaction each; best of 3 rounds.
    const events: EventInfo[] = [];
    const rows: AuditRow[] = [];
    const findings: AuditFinding[] = [];
    const fold = new AuditFold({ event: (e) => void events.push(e), row: (r) => void rows.push(r), finding: (f) => void findings.push(f) });
    const reader = await openReader(exec);
    for await (const rec of reader.events({ onFinding: (f) => fold.finding(f) })) fold.event({ line: rec.line, offset: rec.offset, size: rec.bytes.length, event: rec.event });
    await reader.close();
    const eventArrays = events.map((e) => [e.line, e.offset, e.id, e.time, e.type, e.category, e.run, e.codon, e.size]);
    const rowArrays = rows.map((r) => [
      r.line, r.time, r.transition, r.run, r.codon, r.from, r.to, r.applied ? 1 : 0, r.codonCost, r.runCost,
      r.journaled?.currentRunId ?? null, r.journaled?.runCount ?? null, r.journaled?.totalCost ?? null, r.journaled?.currentRunCost ?? null,
      r.recomputed.currentRunId, r.recomputed.runCount, r.recomputed.totalCost, r.recomputed.currentRunCost,
    ]);
    const findingArrays = findings.map((f) => [f.line, f.byteOffset ?? null, f.code, f.severity, f.run, f.codon, f.message, f.details === undefined ? null : JSON.stringify(f.details)]);
    const file = path.join(path.dirname(layoutOf(exec).index), "insert-compare.sqlite");
    const fresh = (): Database.Database => {
      rmSync(file, { force: true });
      const db = new Database(file);
      db.pragma("journal_mode = OFF");
      db.pragma("synchronous = OFF");
      db.pragma("cache_size = -65536");
      db.exec(SCHEMA_TABLES_SQL);
      return db;
    };
    const cpuOf = (f: () => void): number => {
      const c = process.cpuUsage();
      f();
      const d = process.cpuUsage(c);
      return (d.user + d.system) / 1e6;
    };
    let writer = Infinity;
    let plainBest = Infinity;
    let secondary = 0;
    for (let round = 0; round < 3; round++) {
      let db = fresh();
      const sink = new IndexWriter(db).sink();
      writer = Math.min(writer, cpuOf(() => {
        db.exec("BEGIN");
        for (const e of events) sink.event?.(e);
        for (const r of rows) sink.row?.(r);
        for (const f of findings) sink.finding?.(f);
        db.exec("COMMIT");
      }));
      secondary = cpuOf(() => db.exec(SCHEMA_INDEXES_SQL));
      db.close();
      db = fresh();
      const ev = db.prepare("INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?)");
      const tr = db.prepare("INSERT INTO transitions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      const fi = db.prepare("INSERT INTO findings (line, byte_offset, code, severity, run, codon, message, details) VALUES (?,?,?,?,?,?,?,?)");
      plainBest = Math.min(plainBest, cpuOf(() => {
        db.exec("BEGIN");
        for (const a of eventArrays) ev.run(...a);
        for (const a of rowArrays) tr.run(...a);
        for (const a of findingArrays) fi.run(...a);
        db.exec("COMMIT");
      }));
      db.close();
    }
    rmSync(file, { force: true });
    out = { rows: events.length + rows.length + findings.length, writerCpuSeconds: writer, plainCpuSeconds: plainBest, secondaryIndexesCpuSeconds: secondary };
  }
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ ...out, seconds: (performance.now() - t) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6 }) + "\n");
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === "--child") return child(argv[1], argv[2]);
  const mb = Number(argv[argv.indexOf("--mb") + 1] ?? 100) || 100;
  const json = argv.includes("--json");
  const dir = argv.includes("--dir") ? argv[argv.indexOf("--dir") + 1] : mkdtempSync(path.join(os.tmpdir(), "bench-audit-"));
  const exec = path.join(dir, "exec");
  const journal = layoutOf(exec).journal;
  // ~0.39 MB per repetition with these settings (measured); 9 codon attempts and 2 runs each.
  const perRepeatBytes = 9 * 40 * (1500 + 560);
  if (!existsSync(journal)) writeSyntheticExecution(exec, { repeat: Math.max(1, Math.round((mb * 1e6) / perRepeatBytes)), fillerPerAttempt: 40, fillerBytes: 1500, leaveRunning: false });
  const bytes = statSync(journal).size;
  const lines = readFileSync(journal).reduce((n, b) => (b === 10 ? n + 1 : n), 0);
  const steps: Step[] = [];
  const measure = (name: string, cmd: string[], extra: (stdout: string) => Partial<Step> = () => ({}), capture = true): Step => {
    const r = timed(cmd, !capture);
    // Node children report their own in-process time (excluding node + tsx startup, ~1.5 s CPU).
    const own = r.stdout.trim() ? (JSON.parse(r.stdout.trim().split("\n").pop() as string) as { seconds?: number; cpuSeconds?: number }) : {};
    const step = {
      name, seconds: own.seconds ?? r.seconds, cpuSeconds: own.cpuSeconds ?? r.cpuSeconds, peakRssMb: r.peakRssMb, ...extra(r.stdout),
    };
    steps.push(step);
    return step;
  };
  const parse = (s: string): Record<string, number> => JSON.parse(s.trim().split("\n").pop() as string);

  measure("audit (streamAudit, all rows+findings)", node(["--child", "audit", exec]), (o) => ({ events: parse(o).events }));
  measure("jq: same filtering (state.transition rows)", ["jq", "-c", 'select(.type=="state.transition") | [.timestamp, .data.runId, .data.codonId, .data.transitionType, .data.transition.data.from, .data.transition.data.to, .data.resultingState.totalCost]', journal], () => ({ events: lines }), false);
  measure("jq: parse every line (type)", ["jq", "-c", "type", journal], () => ({ events: lines }), false);
  const full = measure("index: full build", node(["--child", "index-full", exec]), (o) => {
    const p = parse(o);
    return { events: p.events, rows: p.events + p.transitions + p.findings };
  });
  const naive = measure("bench baseline: readFileSync + JSON.parse + insert", node(["--child", "naive-insert", exec]), (o) => ({ events: parse(o).events, rows: parse(o).events }));
  let cmp: Record<string, number> = {};
  measure("index inserts vs plain better-sqlite3 insert", node(["--child", "insert-compare", exec]), (o) => {
    cmp = parse(o);
    return {
      rows: cmp.rows,
      note: `IndexWriter ${cmp.writerCpuSeconds.toFixed(3)} s cpu vs plain ${cmp.plainCpuSeconds.toFixed(3)} s cpu; secondary indexes ${cmp.secondaryIndexesCpuSeconds.toFixed(3)} s`,
    };
  });
  // Incremental: index the first 99% (unmeasured), put the last 1% back, measure the update.
  const whole = readFileSync(journal);
  const cut = whole.lastIndexOf(10, Math.floor(bytes * 0.99)) + 1;
  writeFileSync(journal, whole.subarray(0, cut));
  timed(node(["--child", "index-full", exec]));
  appendFileSync(journal, whole.subarray(cut));
  measure("index: incremental after +1%", node(["--child", "index-inc", exec]), (o) => ({ events: parse(o).events, note: `${parse(o).linesRead} lines read` }));
  measure("query: costliest attempts (CLI process, incl. startup)", [process.execPath, path.resolve(path.dirname(SELF), "../../packages/cli/bin/hankweave-journal.js"), "query", exec, "SELECT codon, attempt, cost FROM codon_attempts ORDER BY cost DESC LIMIT 5", "--no-update"], () => ({}), false);

  const mbOf = bytes / 1e6;
  const result = {
    journal: { bytes, lines, mb: Number(mbOf.toFixed(1)) },
    steps: steps.map((s) => ({
      ...s,
      seconds: Number(s.seconds.toFixed(3)),
      cpuSeconds: Number(s.cpuSeconds.toFixed(3)),
      peakRssMb: Number(s.peakRssMb.toFixed(0)),
      // Throughput per CPU second (robust to a loaded machine); wall time is in `seconds`.
      eventsPerCpuSecond: s.events ? Math.round(s.events / s.cpuSeconds) : undefined,
      mbPerCpuSecond: s.events ? Number((mbOf / s.cpuSeconds).toFixed(1)) : undefined,
      rowsPerCpuSecond: s.rows ? Math.round(s.rows / s.cpuSeconds) : undefined,
    })),
    indexVsPlainInsert: {
      rows: cmp.rows,
      plainInsertRowsPerCpuSecond: Math.round(cmp.rows / cmp.plainCpuSeconds),
      indexWriterRowsPerCpuSecond: Math.round(cmp.rows / cmp.writerCpuSeconds),
      /** Same rows, same schema and pragmas, one transaction: the index's insert path ÷ plain. */
      insertRatio: Number((cmp.plainCpuSeconds / cmp.writerCpuSeconds).toFixed(2)),
      /** Including the secondary indexes the index adds after the bulk insert. */
      withSecondaryIndexesRatio: Number((cmp.plainCpuSeconds / (cmp.writerCpuSeconds + cmp.secondaryIndexesCpuSeconds)).toFixed(2)),
      /** End to end (read, parse every line, fold, insert, indexes, fsync) ÷ plain insert alone. */
      endToEndIndexRowsPerCpuSecond: Math.round((full.rows ?? 0) / full.cpuSeconds),
      endToEndRatio: Number((((full.rows ?? 0) / full.cpuSeconds) / (cmp.rows / cmp.plainCpuSeconds)).toFixed(2)),
      /** `npm run bench`'s index ratio on this journal: the baseline's CPU time ÷ the full build's (same journal, same events). */
      benchBaselineCpuSeconds: Number(naive.cpuSeconds.toFixed(3)),
      vsBenchBaseline: Number((naive.cpuSeconds / full.cpuSeconds).toFixed(2)),
    },
    node: process.version,
    cpus: os.cpus().length,
  };
  if (json) process.stdout.write(JSON.stringify(result, null, 2) + "\n");
  else {
    process.stdout.write(`journal: ${result.journal.mb} MB, ${lines} lines (${exec})\n`);
    for (const s of result.steps) {
      process.stdout.write(`${s.name.padEnd(48)} ${String(s.seconds).padStart(7)} s wall ${String(s.cpuSeconds).padStart(7)} s cpu ${String(s.peakRssMb).padStart(5)} MB RSS` +
        `${s.eventsPerCpuSecond ? `  ${s.eventsPerCpuSecond} ev/cpu-s  ${s.mbPerCpuSecond} MB/cpu-s` : ""}${s.rowsPerCpuSecond ? `  ${s.rowsPerCpuSecond} rows/cpu-s` : ""}${s.note ? `  (${s.note})` : ""}\n`);
    }
    process.stdout.write(`index rows/s vs plain insert rows/s: ${JSON.stringify(result.indexVsPlainInsert)}\n`);
  }
  if (!argv.includes("--dir")) rmSync(dir, { recursive: true, force: true });
}

await main();
