/**
 * Benchmark of audit, index and query throughput on a generated journal, beside `jq` doing the
 * same filtering, and of the index build against a plain better-sqlite3 bulk insert of the same
 * rows. Each measured step runs in its own child process under `/usr/bin/time -f %M` so peak RSS
 * is the step's own.
 *
 *   node --import tsx tools/src/bench-audit.ts [--mb 100] [--dir /tmp/x] [--json]
 *
 * Keep `--mb` ≤ 100 on shared machines. Results go to stdout (a table, or one JSON object).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync, appendFileSync, readFileSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import Database from "better-sqlite3";
import { layoutOf } from "@hankweave-journal/core";
import { buildIndex, streamAudit } from "@hankweave-journal/audit";
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
  } else if (kind === "plain-insert") {
    // The same rows as the index holds, inserted with the same schema, pragmas and one transaction.
    const src = new Database(layoutOf(exec).index, { readonly: true });
    const tables = ["events", "transitions", "findings"];
    const data = tables.map((t) => src.prepare(`SELECT * FROM ${t}`).raw().all() as unknown[][]);
    const schema = (src.prepare("SELECT sql FROM sqlite_master WHERE type='table'").raw().all() as string[][]).map((r) => r[0]);
    src.close();
    const file = path.join(path.dirname(layoutOf(exec).index), "plain-insert.sqlite");
    rmSync(file, { force: true });
    const start = performance.now();
    const db = new Database(file);
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    for (const s of schema) db.exec(s);
    db.exec("BEGIN");
    let rows = 0;
    tables.forEach((t, i) => {
      const cols = data[i][0]?.length ?? 0;
      if (cols === 0) return;
      const ins = db.prepare(`INSERT INTO ${t} VALUES (${new Array(cols).fill("?").join(",")})`);
      for (const r of data[i]) ins.run(...r);
      rows += data[i].length;
    });
    db.exec("COMMIT");
    db.close();
    out = { rows, insertSeconds: (performance.now() - start) / 1000 };
    rmSync(file, { force: true });
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

  const audit = measure("audit (streamAudit, all rows+findings)", node(["--child", "audit", exec]), (o) => ({ events: parse(o).events }));
  measure("jq: same filtering (state.transition rows)", ["jq", "-c", 'select(.type=="state.transition") | [.timestamp, .data.runId, .data.codonId, .data.transitionType, .data.transition.data.from, .data.transition.data.to, .data.resultingState.totalCost]', journal], () => ({ events: lines }), false);
  measure("jq: parse every line (type)", ["jq", "-c", "type", journal], () => ({ events: lines }), false);
  const full = measure("index: full build", node(["--child", "index-full", exec]), (o) => {
    const p = parse(o);
    return { events: p.events, rows: p.events + p.transitions + p.findings };
  });
  const plain = measure("plain better-sqlite3 insert of the same rows", node(["--child", "plain-insert", exec]), (o) => {
    const p = parse(o);
    return { rows: p.rows, note: `insert alone ${p.insertSeconds.toFixed(2)} s` };
  });
  const plainInsertSeconds = Number(/insert alone ([\d.]+)/.exec(plain.note ?? "")?.[1]);
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
      // End to end: reading, parsing every line, the audit fold, inserts, secondary indexes, fsync.
      indexRowsPerCpuSecond: Math.round((full.rows ?? 0) / full.cpuSeconds),
      plainInsertRowsPerSecond: Math.round((plain.rows ?? 0) / plainInsertSeconds),
      endToEndRatio: Number((((full.rows ?? 0) / full.cpuSeconds) / ((plain.rows ?? 0) / plainInsertSeconds)).toFixed(2)),
      // The SQLite stage of the index ≈ index CPU − audit CPU (same read + parse + fold).
      sqliteStageSeconds: Number((full.cpuSeconds - audit.cpuSeconds).toFixed(3)),
      sqliteStageRatio: Number((plainInsertSeconds / Math.max(1e-3, full.cpuSeconds - audit.cpuSeconds)).toFixed(2)),
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
