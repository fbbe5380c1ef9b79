/**
 * ClickHouse's engine over the Parquet export: chdb (ClickHouse in-process, npm `chdb`, ~550 MB)
 * installed on demand into ~/.cache/hankweave-journal/chdb (outside the repo) with
 * `npm install --prefix`; the tests say so and stop when it cannot be had (offline, no space).
 * They run the README's recipes: the four questions straight over the files
 * (`file('<dir>/codon_attempts/*\/*.parquet', Parquet)`, as `s3()` reads them), the README's DDL
 * loaded with INSERT … SELECT, and the incremental replace of one execution (DELETE its rows,
 * INSERT its new partition file) — all equal to the fold's and the SQLite index's answers.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { clickhouseDdl, EXPORT_TABLES, exportExecutions, exportTargets, prepareExportDir, type ExportSummary } from "../index.js";
import { CONF, REPO, buildFleet, conformanceNames, foldAnswers, indexAnswers, answersFromRows, tempDir, type Fleet } from "../testing/export-fixture.js";

const CHDB_VERSION = "3.4.0";
const CACHE = path.join(os.homedir(), ".cache/hankweave-journal/chdb");

interface Chdb {
  Session: new (path?: string) => { query(sql: string, format?: string): string; cleanup(): void };
}

/** chdb from the cache, installed first when missing; null (with why) when it cannot be had. */
function loadChdb(): { chdb: Chdb | null; why: string } {
  const manifest = path.join(CACHE, "node_modules/chdb/package.json");
  if (!fs.existsSync(manifest) || JSON.parse(fs.readFileSync(manifest, "utf8")).version !== CHDB_VERSION) {
    fs.mkdirSync(CACHE, { recursive: true });
    const t = Date.now();
    const r = spawnSync("npm", ["install", "--prefix", CACHE, `chdb@${CHDB_VERSION}`, "--no-audit", "--no-fund", "--no-save"], { encoding: "utf8", timeout: 600_000 });
    console.warn(`chdb ${CHDB_VERSION}: npm install --prefix ${CACHE} took ${((Date.now() - t) / 1000).toFixed(1)} s (exit ${r.status})`);
    if (r.status !== 0) return { chdb: null, why: `npm install failed: ${(r.stderr ?? "").split("\n").slice(-3).join(" ")}` };
  }
  try {
    return { chdb: createRequire(path.join(CACHE, "package.json"))("chdb") as Chdb, why: "" };
  } catch (e) {
    return { chdb: null, why: `chdb does not load: ${(e as Error).message.split("\n")[0]}` };
  }
}

function rows(chdb: { query(sql: string, format?: string): string }, sql: string): unknown[][] {
  return (JSON.parse(chdb.query(sql, "JSONCompact")) as { data: unknown[][] }).data;
}

const files = (dir: string, t: string): string => `file('${path.join(dir, t, "*", "data.parquet")}', Parquet)`;

/** The four questions in ClickHouse SQL over `src(table)`. */
function clickhouseAnswers(db: { query(sql: string, format?: string): string }, src: (t: string) => string): string[] {
  const ms = (c: string): string => `toUnixTimestamp64Milli(parseDateTime64BestEffort(${c}, 3))`;
  return answersFromRows({
    cost: rows(db, `SELECT execution_path, codon, sum(cost), count() FROM ${src("codon_attempts")} GROUP BY execution_path, codon`),
    outcome: rows(db, `SELECT execution_path, outcome, count() FROM ${src("codon_attempts")} GROUP BY execution_path, outcome`),
    reason: rows(db, `SELECT execution_path, codon, attempt, failure_reason FROM ${src("codon_attempts")} WHERE failure_reason IS NOT NULL`),
    duration: rows(db, `SELECT execution_path, codon, attempt, ${ms("end_time")} - ${ms("start_time")} FROM ${src("codon_attempts")} WHERE end_time IS NOT NULL AND start_time IS NOT NULL`),
  });
}

const present = fs.existsSync(CONF) && conformanceNames().length > 0;
const loaded = present ? loadChdb() : { chdb: null, why: "" };

if (!present) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    expect(present).toBe(false);
  });
} else if (loaded.chdb === null) {
  it(`chdb (ClickHouse's engine) is absent: these tests cannot run (${loaded.why})`, () => {
    console.warn(`skipped: chdb could not be had: ${loaded.why}`);
    expect(loaded.chdb).toBeNull();
  });
} else {
  const chdb = loaded.chdb;
  describe("ClickHouse (chdb) over the Parquet export", () => {
    let fleet: Fleet;
    let out: string;
    let expected: string[];
    let session: InstanceType<Chdb["Session"]>;
    let sessionDir: string;
    beforeAll(async () => {
      fleet = await buildFleet({ gen: [7], genBytes: 300_000, diet: true });
      out = path.join(tempDir("hw-fexport-ch-"), "pq");
      const t = await exportTargets(fleet.root);
      await exportExecutions(await prepareExportDir(out, REPO, t.execs), t.targets, { format: "parquet", root: t.root });
      expected = await foldAnswers(fleet);
      sessionDir = tempDir("hw-fexport-chs-");
      session = new chdb.Session(sessionDir);
    }, 120_000);
    afterAll(() => {
      session?.cleanup();
      fs.rmSync(sessionDir, { recursive: true, force: true });
      fs.rmSync(fleet.root, { recursive: true, force: true });
      fs.rmSync(path.dirname(out), { recursive: true, force: true });
    });

    it("the four questions straight over the partition files equal the fold's and the SQLite index's", async () => {
      expect(await indexAnswers(fleet)).toEqual(expected);
      expect(clickhouseAnswers(session, (t) => files(out, t))).toEqual(expected);
      // The Hive key is a column with use_hive_partitioning (what s3('…/execution=*/…') pruning uses).
      const ids = rows(session, `SELECT count(DISTINCT execution), countIf(execution != execution_id) FROM ${files(out, "runs")} SETTINGS use_hive_partitioning = 1`);
      expect(ids.map((r) => r.map(Number))).toEqual([[Object.keys(fleet.execs).length, 0]]);
    });

    it("the README's DDL loads the export, and replacing one execution's rows after a re-export keeps the answers equal", async () => {
      session.query("CREATE DATABASE IF NOT EXISTS hw");
      for (const t of EXPORT_TABLES) {
        session.query(clickhouseDdl(t, "hw"));
        session.query(`INSERT INTO hw.${t} SELECT * FROM ${files(out, t)}`);
      }
      expect(clickhouseAnswers(session, (t) => `hw.${t}`)).toEqual(expected);
      const events = rows(session, "SELECT count() FROM hw.events")[0]![0];
      expect(Number(events)).toBeGreaterThan(1000);
      // One execution changes; the re-export rewrites its partition; ClickHouse replaces its rows.
      const exec = fleet.execs["conf/budget-loop-replay"]!;
      const j = layoutOf(exec).journal;
      const last = JSON.parse(fs.readFileSync(j, "utf8").trimEnd().split("\n").pop()!) as { timestamp: string };
      fs.appendFileSync(j, JSON.stringify({ id: "ch-late", timestamp: last.timestamp, type: "assistant.message", data: { text: "late" } }) + "\n");
      const t = await exportTargets(fleet.root);
      const s: ExportSummary = await exportExecutions(out, t.targets, { format: "parquet", root: t.root });
      const written = s.executions.filter((e) => e.status === "written");
      expect(written.map((e) => e.path)).toEqual(["conf/budget-loop-replay"]);
      for (const e of written) {
        for (const tb of EXPORT_TABLES) {
          session.query(`DELETE FROM hw.${tb} WHERE execution_id = '${e.id}'`);
          session.query(`INSERT INTO hw.${tb} SELECT * FROM file('${path.join(out, tb, `execution=${e.id}`, "data.parquet")}', Parquet)`);
        }
      }
      expect(Number(rows(session, "SELECT count() FROM hw.events")[0]![0])).toBe(Number(events) + 1);
      expect(clickhouseAnswers(session, (tb) => `hw.${tb}`)).toEqual(await foldAnswers(fleet));
    });
  });
}
