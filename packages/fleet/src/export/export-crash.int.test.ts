/**
 * Real SIGKILLs during a Parquet export (bounded: 32 kills, each child at most a few seconds):
 * after every kill each partition file a reader finds opens in DuckDB, holds whole rows and only
 * `data.parquet` sits in a partition directory; the re-run completes and equals a clean export.
 * Two lanes (each its own root of two executions and its own export directory) run side by side:
 * a child's cost is mostly starting Node and loading DuckDB, so two at a time use both cores of a
 * 2-core machine. In each lane a first run to the end measures an export; then half of the kills
 * are the child's own, right after its n-th partition file (between the tables of one execution:
 * the manifest is still the old one), half at times spread over the measured export (inside
 * DuckDB's COPY, the fsync, the rename). The check after a kill is batched: one DuckDB query per
 * table over all its partition files (rows per file; for `events` the lines 0..n-1 each once)
 * and one over their footers' key/value metadata. The children require @duckdb/node-api from a
 * one-file bundle of it made here (same code; a child's start is mostly that package's loading).
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DuckDBConnection } from "@duckdb/node-api";
import { layoutOf } from "@hankweave-journal/core";
import { bundleCrashChild, runCrashChild } from "@hankweave-journal/journal/testing";
import { duckdb, EXPORT_TABLES, exportExecutions, exportTargets, fleetQuery, prepareExportDir } from "../index.js";
import { sqlString } from "./duckdb.js";
import { CONF, conformanceNames, copyConformance, tempDir } from "../testing/export-fixture.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KILLS = 32;
const LANES = 2;
const NAMES = ["budget-loop-replay", "budget-on-exceeded-fail-replay"];

/** Append one event to each journal (every execution changes: the next export rewrites all). */
function touchAll(execs: string[], i: number): void {
  for (const exec of execs) {
    const j = layoutOf(exec).journal;
    const last = JSON.parse(fs.readFileSync(j, "utf8").trimEnd().split("\n").pop()!) as { timestamp: string };
    fs.appendFileSync(j, JSON.stringify({ id: `crash-${i}`, timestamp: last.timestamp, type: "assistant.message", data: { text: `t${i}` } }) + "\n");
  }
}

const one = async (conn: DuckDBConnection, sql: string): Promise<unknown[][]> => (await conn.run(sql)).getRowsJS() as Promise<unknown[][]>;

/** Every partition file of `out` opens in DuckDB with whole rows (see the module comment); returns how many were checked. */
async function checkPartitions(conn: DuckDBConnection, out: string): Promise<number> {
  const all: string[] = [];
  for (const t of EXPORT_TABLES) {
    if (!fs.existsSync(path.join(out, t))) continue;
    const files: string[] = [];
    for (const p of fs.readdirSync(path.join(out, t))) {
      expect(fs.readdirSync(path.join(out, t, p))).toEqual(["data.parquet"]);
      files.push(path.join(out, t, p, "data.parquet"));
    }
    if (files.length === 0) continue;
    all.push(...files);
    const list = `[${files.map(sqlString).join(", ")}]`;
    const rows = t === "events"
      ? await one(conn, `SELECT filename, count(*)::INT, count(DISTINCT line)::INT, max(line)::INT FROM read_parquet(${list}, filename = true) GROUP BY filename`)
      : await one(conn, `SELECT filename, count(*)::INT FROM read_parquet(${list}, filename = true) GROUP BY filename`);
    // Every file has rows (a file without rows is not in the GROUP BY: the count of files tells).
    expect(rows.length).toBe(files.length);
    for (const r of rows) {
      expect(r[1] as number).toBeGreaterThan(0);
      // Whole rows of events: lines 0..n-1, each once.
      if (t === "events") expect([r[2], r[3]]).toEqual([r[1], (r[1] as number) - 1]);
    }
  }
  if (all.length > 0) {
    const kv = await one(conn, `SELECT file_name, decode(value) FROM parquet_kv_metadata([${all.map(sqlString).join(", ")}]) WHERE decode(key) = 'schema_version'`);
    expect(kv.length).toBe(all.length);
    expect(new Set(kv.map((r) => r[1]))).toEqual(new Set(["1"]));
  }
  return all.length;
}

if (!fs.existsSync(CONF) || !NAMES.every((n) => conformanceNames().includes(n))) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    expect(NAMES.every((n) => conformanceNames().includes(n))).toBe(false);
  });
} else {
  describe("SIGKILL during export", () => {
    let bundle: string;
    let api: string;
    let work: string;
    beforeAll(async () => {
      bundle = await bundleCrashChild(path.join(HERE, "export-crash-child.ts"), "fleet-export");
      // @duckdb/node-api's own JavaScript in one file beside the child (its native binding stays a require).
      api = path.join(path.dirname(bundle), `duckdb-node-api-${process.pid}.cjs`);
      const esbuild = (await import("esbuild")) as typeof import("esbuild");
      await esbuild.build({
        entryPoints: [createRequire(import.meta.url).resolve("@duckdb/node-api")], outfile: api, bundle: true, platform: "node", format: "cjs",
        target: "node20", external: ["@duckdb/node-bindings"], logLevel: "error",
      });
      work = tempDir("hw-fexport-crash-");
    }, 60_000);
    afterAll(() => {
      fs.rmSync(work, { recursive: true, force: true });
      fs.rmSync(api, { force: true });
    });

    /** One lane: `kills` kills of exports of its own root into its own directory, then the re-run and a clean export. */
    async function lane(k: number, kills: number): Promise<{ killed: number; selfKilled: number; filesChecked: number }> {
      const root = path.join(work, `root${k}`);
      const execs = NAMES.map((n) => copyConformance(n, path.join(root, n)));
      const out = path.join(work, `pq${k}`);
      const { DuckDBInstance } = duckdb();
      const db = await DuckDBInstance.create(":memory:", { threads: "1" });
      const conn = await db.connect();
      let killed = 0;
      let selfKilled = 0;
      let filesChecked = 0;
      try {
        // One run to the end: the starting export, and how long an export takes here (the timed kills fall inside it).
        touchAll(execs, -1);
        const first = await runCrashChild(bundle, [root, out, api], { afterSpawnMs: 30_000 });
        const m = /done (\d+) 0 0 (\d+)/.exec(first.stdout);
        expect(m?.[1]).toBe(String(NAMES.length));
        const exportMs = Number(m![2]);
        for (let i = 0; i < kills; i++) {
          touchAll(execs, i);
          const self = i % 2 === 0;
          // A timed kill that came after the end (the machine got faster) is tried again, sooner (at most 4 runs).
          for (let tries = 0, at = exportMs * 0.85 * (((i + k) * 0.37) % 1); tries < (self ? 1 : 4); tries++, at /= 3) {
            const r = await runCrashChild(bundle, [root, out, api], self
              ? { env: { KILL_AT_PARTITION: String(1 + ((i / 2) % (EXPORT_TABLES.length * NAMES.length))) }, afterSpawnMs: 20_000 }
              : { afterReadyMs: Math.floor(at) });
            expect(r.stderr).toBe("");
            filesChecked += await checkPartitions(conn, out);
            if (!r.killed) {
              touchAll(execs, 1000 + i * 10 + tries);
              continue;
            }
            killed += 1;
            if (self) selfKilled += 1;
            break;
          }
        }
      } finally {
        conn.closeSync();
        db.closeSync();
      }
      // The re-run completes, and its tables equal a clean export's.
      const t = await exportTargets(root);
      const s = await exportExecutions(await prepareExportDir(out, work, t.execs), t.targets, { format: "parquet", root: t.root });
      expect(s.failed).toBe(0);
      expect(fs.readdirSync(path.join(out, "_tmp"))).toEqual([]);
      const clean = path.join(work, `clean${k}`);
      await exportExecutions(await prepareExportDir(clean, work, t.execs), t.targets, { format: "parquet", root: t.root });
      const q = "SELECT execution_path, count(*), sum(size), max(line) FROM events GROUP BY ALL ORDER BY 1";
      expect((await fleetQuery(out, q)).rows).toEqual((await fleetQuery(clean, q)).rows);
      const a = "SELECT execution_path, codon, attempt, outcome, cost FROM codon_attempts ORDER BY ALL";
      expect((await fleetQuery(out, a)).rows).toEqual((await fleetQuery(clean, a)).rows);
      return { killed, selfKilled, filesChecked };
    }

    it(`${KILLS} kills never leave a partition file a reader cannot open or that is half-written; the re-run completes`, async () => {
      const started = Date.now();
      const lanes = await Promise.all(Array.from({ length: LANES }, (_, k) => lane(k, KILLS / LANES)));
      const sum = (f: (x: (typeof lanes)[number]) => number): number => lanes.reduce((s, x) => s + f(x), 0);
      expect(sum((x) => x.killed)).toBeGreaterThanOrEqual(30);
      expect(sum((x) => x.selfKilled)).toBe(KILLS / 2);
      for (const x of lanes) expect(x.filesChecked).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(90_000);
    }, 120_000);
  });
}
