/**
 * Real SIGKILLs during a Parquet export (bounded: 32 kills, each child at most a few seconds):
 * after every kill each partition file a reader finds opens in DuckDB, holds whole rows and only
 * `data.parquet` sits in a partition directory; the re-run completes and equals a clean export.
 * A first run to the end measures an export; then half of the kills are the child's own, right
 * after its n-th partition file (between the tables of one execution: the manifest is still the
 * old one), half at times spread over the measured export (inside DuckDB's COPY, the fsync, the
 * rename).
 */
import * as fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { bundleCrashChild, runCrashChild } from "@hankweave-journal/journal/testing";
import { duckdb, EXPORT_TABLES, exportExecutions, exportTargets, fleetQuery, prepareExportDir } from "../index.js";
import { CONF, conformanceNames, copyConformance, tempDir } from "../testing/export-fixture.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KILLS = 32;
const NAMES = ["budget-loop-replay", "budget-on-exceeded-fail-replay"];

/** Append one event to each journal (every execution changes: the next export rewrites all). */
function touchAll(execs: string[], i: number): void {
  for (const exec of execs) {
    const j = layoutOf(exec).journal;
    const last = JSON.parse(fs.readFileSync(j, "utf8").trimEnd().split("\n").pop()!) as { timestamp: string };
    fs.appendFileSync(j, JSON.stringify({ id: `crash-${i}`, timestamp: last.timestamp, type: "assistant.message", data: { text: `t${i}` } }) + "\n");
  }
}

if (!fs.existsSync(CONF) || !NAMES.every((n) => conformanceNames().includes(n))) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    expect(NAMES.every((n) => conformanceNames().includes(n))).toBe(false);
  });
} else {
  describe("SIGKILL during export", () => {
    let bundle: string;
    let root: string;
    let work: string;
    const execs: string[] = [];
    beforeAll(async () => {
      bundle = await bundleCrashChild(path.join(HERE, "export-crash-child.ts"), "fleet-export");
      root = tempDir("hw-fexport-crash-");
      work = tempDir("hw-fexport-crash-out-");
      for (const n of NAMES) execs.push(copyConformance(n, path.join(root, n)));
    }, 60_000);
    afterAll(() => {
      fs.rmSync(root, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
    });

    it(`${KILLS} kills never leave a partition file a reader cannot open or that is half-written; the re-run completes`, async () => {
      const out = path.join(work, "pq");
      const { DuckDBInstance } = duckdb();
      const db = await DuckDBInstance.create(":memory:");
      const conn = await db.connect();
      let killed = 0;
      let selfKilled = 0;
      let filesChecked = 0;
      const started = Date.now();
      try {
        // One run to the end: the starting export, and how long an export takes here (the timed kills fall inside it).
        touchAll(execs, -1);
        const first = await runCrashChild(bundle, [root, out], { afterSpawnMs: 30_000 });
        const m = /done (\d+) 0 0 (\d+)/.exec(first.stdout);
        expect(m?.[1]).toBe(String(NAMES.length));
        const exportMs = Number(m![2]);
        for (let i = 0; i < KILLS; i++) {
          touchAll(execs, i);
          const self = i % 2 === 0;
          const r = await runCrashChild(bundle, [root, out], self
            ? { env: { KILL_AT_PARTITION: String(1 + ((i / 2) % (EXPORT_TABLES.length * NAMES.length))) }, afterSpawnMs: 20_000 }
            : { afterReadyMs: Math.floor(exportMs * 0.85 * ((i * 0.37) % 1)) });
          if (r.killed) killed += 1;
          if (r.killed && self) selfKilled += 1;
          expect(r.stderr).toBe("");
          for (const t of EXPORT_TABLES) {
            if (!fs.existsSync(path.join(out, t))) continue;
            for (const p of fs.readdirSync(path.join(out, t))) {
              expect(fs.readdirSync(path.join(out, t, p))).toEqual(["data.parquet"]);
              const f = path.join(out, t, p, "data.parquet").replace(/'/g, "''");
              const rows = (await (await conn.run(`SELECT count(*)::INT FROM read_parquet('${f}')`)).getRowsJS())[0]![0] as number;
              const kv = await (await conn.run(`SELECT decode(value) FROM parquet_kv_metadata('${f}') WHERE decode(key) = 'schema_version'`)).getRowsJS();
              expect(kv).toEqual([["1"]]);
              if (t === "events") {
                // Whole rows: lines 0..n-1, each once.
                const [n, distinct, max] = (await (await conn.run(`SELECT count(*)::INT, count(DISTINCT line)::INT, max(line)::INT FROM read_parquet('${f}')`)).getRowsJS())[0]!;
                expect([distinct, max]).toEqual([n, (n as number) - 1]);
              }
              expect(rows).toBeGreaterThan(0);
              filesChecked += 1;
            }
          }
        }
      } finally {
        conn.closeSync();
        db.closeSync();
      }
      expect(killed).toBeGreaterThanOrEqual(30);
      expect(selfKilled).toBe(KILLS / 2);
      expect(filesChecked).toBeGreaterThan(0);
      // The re-run completes, and its tables equal a clean export's.
      const t = await exportTargets(root);
      const s = await exportExecutions(await prepareExportDir(out, work, t.execs), t.targets, { format: "parquet", root: t.root });
      expect(s.failed).toBe(0);
      expect(fs.readdirSync(path.join(out, "_tmp"))).toEqual([]);
      const clean = path.join(work, "clean");
      await exportExecutions(await prepareExportDir(clean, work, t.execs), t.targets, { format: "parquet", root: t.root });
      const q = "SELECT execution_path, count(*), sum(size), max(line) FROM events GROUP BY ALL ORDER BY 1";
      expect((await fleetQuery(out, q)).rows).toEqual((await fleetQuery(clean, q)).rows);
      const a = "SELECT execution_path, codon, attempt, outcome, cost FROM codon_attempts ORDER BY ALL";
      expect((await fleetQuery(out, a)).rows).toEqual((await fleetQuery(clean, a)).rows);
      expect(Date.now() - started).toBeLessThan(90_000);
    }, 120_000);
  });
}
