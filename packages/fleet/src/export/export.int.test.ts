/**
 * The fleet export on a root of real executions (conformance copies, two diets of one, small
 * generated ones): the four questions (per-codon cost, attempts by outcome, failure reasons,
 * durations) answered by DuckDB over the Parquet and the NDJSON export equal the fold's and the
 * per-execution SQLite index's; incremental re-export rewrites exactly the changed partitions;
 * bad input is coded; `fleet query` is read-only and bounded.
 */
import * as fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { memoryIO, runCli } from "@hankweave-journal/cli";
import { EXPORT_TABLES, fleetQuery, setDuckdbRequirer, streamFleetQuery, type ExportSummary } from "../index.js";
import { buildFleet, conformanceNames, CONF, DUCKDB_QUESTIONS, answersFromRows, foldAnswers, indexAnswers, tempDir, type Fleet } from "../testing/export-fixture.js";

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await runCli(args, io);
  return { code, out: io.out(), err: io.err() };
}

async function duckAnswers(dir: string): Promise<string[]> {
  const q = {} as Record<keyof typeof DUCKDB_QUESTIONS, unknown[][]>;
  for (const [k, sql] of Object.entries(DUCKDB_QUESTIONS)) q[k as keyof typeof DUCKDB_QUESTIONS] = (await fleetQuery(dir, sql)).rows;
  return answersFromRows(q);
}

/** ino:mtime:size of every partition file (what "unchanged" means). */
function partitionStats(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of EXPORT_TABLES) {
    for (const p of fs.readdirSync(path.join(dir, t))) {
      for (const f of fs.readdirSync(path.join(dir, t, p))) {
        const st = fs.statSync(path.join(dir, t, p, f), { bigint: true });
        out[`${t}/${p}/${f}`] = `${st.ino}:${st.mtimeNs}:${st.size}`;
      }
    }
  }
  return out;
}

if (!fs.existsSync(CONF) || conformanceNames().length === 0) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    expect(fs.existsSync(CONF) && conformanceNames().length > 0).toBe(false);
  });
} else {
  describe("export of a fleet root", () => {
    let fleet: Fleet;
    let work: string;
    let parquet: string;
    let expected: string[];

    beforeAll(async () => {
      fleet = await buildFleet({ gen: [3, 4], genBytes: 150_000, diet: true });
      work = tempDir("hw-fexport-out-");
      parquet = path.join(work, "pq");
      expected = await foldAnswers(fleet);
    }, 120_000);
    afterAll(() => {
      fs.rmSync(fleet.root, { recursive: true, force: true });
      fs.rmSync(work, { recursive: true, force: true });
    });

    it("writes every execution (plain, compatible, extended, generated) with --json summary and exit 0", async () => {
      const r = await cli(["export", fleet.root, "-o", parquet, "--json"]);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      const s = JSON.parse(r.out) as ExportSummary;
      expect(s.format).toBe("parquet");
      expect(s.failed).toBe(0);
      expect(s.written).toBe(Object.keys(fleet.execs).length);
      expect(s.executions.map((e) => e.path).sort()).toEqual(Object.keys(fleet.execs).sort());
      for (const e of s.executions) {
        expect(e.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{12}$/);
        for (const t of EXPORT_TABLES) expect(fs.existsSync(path.join(parquet, t, `execution=${e.id}`, "data.parquet"))).toBe(true);
      }
      const meta = JSON.parse(fs.readFileSync(path.join(parquet, "_export.json"), "utf8"));
      expect(meta.schemaVersion).toBe(1);
      expect(Object.keys(meta.tables)).toEqual([...EXPORT_TABLES]);
    });

    it("DuckDB over the Parquet export answers the four questions as the fold and the SQLite index do", async () => {
      const fromIndex = await indexAnswers(fleet);
      expect(fromIndex).toEqual(expected);
      const got = await duckAnswers(parquet);
      expect(got.length).toBeGreaterThan(50);
      expect(got.some((l) => l.startsWith("reason|"))).toBe(true);
      expect(got.some((l) => l.startsWith("outcome|") && l.includes("|failed|"))).toBe(true);
      expect(got).toEqual(expected);
    });

    it("events and transitions equal the index's rows; the schema version is in each file's metadata", async () => {
      for (const rel of ["conf/plan-gen-execution", "dieted/budget-loop-replay-extended"]) {
        const exec = fleet.execs[rel];
        if (!exec) continue;
        const { queryIndex } = await import("@hankweave-journal/audit");
        const idx = queryIndex(exec, "SELECT line, byte_offset, id, type, category, run, codon, size FROM events ORDER BY line").rows;
        const q = `SELECT line, byte_offset, id, type, category, run, codon, size FROM events WHERE execution_path = '${rel}' ORDER BY line`;
        expect((await fleetQuery(parquet, q)).rows).toEqual(idx);
        const ti = queryIndex(exec, "SELECT line, type, run, codon, applied, recomputed_total_cost FROM transitions ORDER BY line").rows;
        const tq = `SELECT line, type, run, codon, applied::INT, recomputed_total_cost FROM transitions WHERE execution_path = '${rel}' ORDER BY line`;
        expect((await fleetQuery(parquet, tq)).rows).toEqual(ti);
      }
      const files = path.join(parquet, "*", "*", "data.parquet");
      const kv = await fleetQuery(parquet, `SELECT decode(value) AS v, count(*) AS n FROM parquet_kv_metadata('${files}') WHERE decode(key) = 'schema_version' GROUP BY v`);
      expect(kv.rows).toEqual([["1", EXPORT_TABLES.length * Object.keys(fleet.execs).length]]);
    });

    it("NDJSON export answers the same; --payloads fills events.payload with each line byte for byte", async () => {
      const nd = path.join(work, "nd");
      const r = await cli(["export", fleet.root, "-o", nd, "--format", "ndjson", "--payloads", "--json"]);
      expect(r.code).toBe(0);
      expect(await duckAnswers(nd)).toEqual(expected);
      const exec = fleet.execs["conf/budget-loop-replay"]!;
      const lines = fs.readFileSync(layoutOf(exec).journal, "utf8").split("\n").filter((l) => l.length > 0);
      const got = await fleetQuery(nd, "SELECT payload FROM events WHERE execution_path = 'conf/budget-loop-replay' ORDER BY line");
      expect(got.rows.map((x) => x[0])).toEqual(lines);
      // A dieted journal's lines come back byte for byte through the transparent reader.
      for (const kind of ["compatible", "extended"]) {
        const rel = `dieted/budget-loop-replay-${kind}`;
        if (!fleet.execs[rel]) continue;
        const d = await fleetQuery(nd, `SELECT payload FROM events WHERE execution_path = '${rel}' ORDER BY line`);
        expect(d.rows.map((x) => x[0]), rel).toEqual(lines);
      }
      // Another format into the same directory is refused, not mixed.
      const mixed = await cli(["export", fleet.root, "-o", nd, "--json"]);
      expect(mixed.code).toBe(1);
      expect(mixed.err).toContain("EXPORT_DIR_INVALID");
    });

    it("incremental: a second run skips everything and changes no file; touching one execution rewrites exactly its partitions", async () => {
      const before = partitionStats(parquet);
      const again = JSON.parse((await cli(["export", fleet.root, "-o", parquet, "--json"])).out) as ExportSummary;
      expect(again.written).toBe(0);
      expect(again.skipped).toBe(Object.keys(fleet.execs).length);
      expect(partitionStats(parquet)).toEqual(before);
      // Append one event to one execution's journal.
      const exec = fleet.execs["conf/budget-global-uniform-replay"]!;
      const j = layoutOf(exec).journal;
      const last = fs.readFileSync(j, "utf8").trimEnd().split("\n").pop()!;
      const ev = JSON.parse(last) as { id: string; timestamp: string };
      fs.appendFileSync(j, JSON.stringify({ id: `${ev.id}-x`, timestamp: ev.timestamp, type: "assistant.message", data: { text: "late" } }) + "\n");
      const third = JSON.parse((await cli(["export", fleet.root, "-o", parquet, "--json"])).out) as ExportSummary;
      expect(third.written).toBe(1);
      const changed = third.executions.find((e) => e.status === "written")!;
      expect(changed.path).toBe("conf/budget-global-uniform-replay");
      const after = partitionStats(parquet);
      const diff = Object.keys(after).filter((k) => after[k] !== before[k]).sort();
      expect(diff).toEqual(EXPORT_TABLES.map((t) => `${t}/execution=${changed.id}/data.parquet`).sort());
      const n = await fleetQuery(parquet, `SELECT count(*) FROM events WHERE execution = '${changed.id}'`);
      expect(n.rows[0]![0]).toBe(changed.rows!.events);
      expect(fs.readdirSync(path.join(parquet, "_tmp"))).toEqual([]);
    });

    it("a removed execution is reported, and its partitions deleted only with --prune", async () => {
      const exec = fleet.execs["gen/g4"]!;
      const moved = path.join(work, "g4-away");
      fs.renameSync(exec, moved);
      try {
        const s = JSON.parse((await cli(["export", fleet.root, "-o", parquet, "--json"])).out) as ExportSummary;
        const gone = s.executions.find((e) => e.path === "gen/g4")!;
        expect(gone.status).toBe("removed");
        expect(fs.existsSync(path.join(parquet, "runs", `execution=${gone.id}`))).toBe(true);
        const p = JSON.parse((await cli(["export", fleet.root, "-o", parquet, "--prune", "--json"])).out) as ExportSummary;
        expect(p.executions.find((e) => e.path === "gen/g4")!.status).toBe("pruned");
        for (const t of EXPORT_TABLES) expect(fs.existsSync(path.join(parquet, t, `execution=${gone.id}`))).toBe(false);
        const q = await fleetQuery(parquet, "SELECT count(*) FROM runs WHERE execution_path = 'gen/g4'");
        expect(q.rows[0]![0]).toBe(0);
      } finally {
        fs.renameSync(moved, exec);
      }
    });

    it("fleet query refuses writes, other files and several statements (QUERY_INVALID); bounds rows (QUERY_TOO_LARGE)", async () => {
      const bad = [
        `COPY runs TO '${path.join(parquet, "x.csv")}'`, "ATTACH ':memory:' AS m", "CREATE TABLE t AS SELECT 1", "INSERT INTO runs SELECT * FROM runs",
        "SET enable_external_access = true", "SELECT * FROM read_csv('/etc/passwd')", "SELECT 1; SELECT 2", "INSTALL httpfs", "SELEC 1",
      ];
      for (const sql of bad) {
        const e = await fleetQuery(parquet, sql).catch((x: unknown) => x);
        expect(isJournalError(e, "QUERY_INVALID"), sql).toBe(true);
      }
      expect(fs.existsSync(path.join(parquet, "x.csv"))).toBe(false);
      const big = await streamFleetQuery(parquet, "SELECT * FROM events", () => undefined, () => undefined, { maxRows: 10 }).catch((x: unknown) => x);
      expect(isJournalError(big, "QUERY_TOO_LARGE")).toBe(true);
      const slow = await fleetQuery(parquet, "SELECT count(*) FROM range(100000000000) a", { timeoutMs: 300 }).catch((x: unknown) => x);
      expect(isJournalError(slow, "QUERY_TIMEOUT")).toBe(true);
    });

    it("fleet query prints tables and --json like query; a directory that is no export is EXPORT_DIR_INVALID", async () => {
      const t = await cli(["fleet", "query", parquet, "SELECT outcome, count(*) AS n FROM codon_attempts GROUP BY ALL ORDER BY outcome"]);
      expect(t.code).toBe(0);
      expect(t.out).toMatch(/^outcome\s+n\n-+\s+-+\n/);
      expect(t.out).toMatch(/\(\d+ rows?\)\n$/);
      const j = await cli(["fleet", "query", parquet, "SELECT count(*) AS n FROM runs", "--json"]);
      const o = JSON.parse(j.out) as { columns: string[]; rows: { n: number }[] };
      expect(o.columns).toEqual(["n"]);
      expect(o.rows[0]!.n).toBeGreaterThanOrEqual(Object.keys(fleet.execs).length - 1);
      const no = await cli(["fleet", "query", fleet.root, "SELECT 1"]);
      expect(no.code).toBe(1);
      expect(no.err).toContain("EXPORT_DIR_INVALID");
    });
  });

  describe("export: bad input", () => {
    let root: string;
    const made: string[] = [];
    const scratch = (prefix: string): string => {
      const d = tempDir(prefix);
      made.push(d);
      return d;
    };
    beforeAll(async () => {
      root = tempDir("hw-fexport-bad-");
      const { copyConformance } = await import("../testing/export-fixture.js");
      copyConformance("budget-loop-replay", path.join(root, "good"));
      // A half pair: events.jsonl.zst without its manifest (HALF_PAIR).
      const half = copyConformance("budget-loop-replay", path.join(root, "half"));
      const l = layoutOf(half);
      fs.renameSync(l.journal, l.dietedJournal);
      // A dieted execution whose CAS blobs are gone (the reader fails on it).
      fs.mkdirSync(path.join(root, "empty", ".hankweave"), { recursive: true });
    });
    afterAll(() => {
      for (const d of [root, ...made]) fs.rmSync(d, { recursive: true, force: true });
    });

    it("a broken execution gets its own line and code, the others are exported, exit 1", async () => {
      const out = path.join(scratch("hw-fexport-bad-out-"), "x");
      const r = await cli(["export", root, "-o", out, "--format", "ndjson", "--json"]);
      expect(r.code).toBe(1);
      const s = JSON.parse(r.out) as ExportSummary;
      const by = Object.fromEntries(s.executions.map((e) => [e.path, e]));
      expect(by.good!.status).toBe("written");
      expect(by.half!.status).toBe("failed");
      expect(by.half!.code).toBe("HALF_PAIR");
      expect(by.empty!.status).toBe("skipped");
      expect(by.empty!.code).toBe("JOURNAL_NOT_FOUND");
      const text = await cli(["export", root, "-o", out, "--format", "ndjson"]);
      expect(text.code).toBe(1);
      expect(text.out).toMatch(/^failed\s+half\s+HALF_PAIR/m);
      expect(text.out).toMatch(/^skipped\s+good\s+unchanged/m);
    });

    it("-o inside an execution is OUTPUT_IN_EXECUTION; a file or a foreign non-empty directory is EXPORT_DIR_INVALID", async () => {
      const inHw = await cli(["export", path.join(root, "good"), "-o", path.join(root, "good", ".hankweave", "x")]);
      expect(inHw.code).toBe(1);
      expect(inHw.err).toContain("OUTPUT_IN_EXECUTION");
      const inExec = await cli(["export", root, "-o", path.join(root, "good", "exports")]);
      expect(inExec.err).toContain("OUTPUT_IN_EXECUTION");
      expect(fs.existsSync(path.join(root, "good", "exports"))).toBe(false);
      const file = path.join(scratch("hw-fexport-f-"), "f");
      fs.writeFileSync(file, "x");
      expect((await cli(["export", root, "-o", file])).err).toContain("EXPORT_DIR_INVALID");
      const foreign = scratch("hw-fexport-foreign-");
      fs.writeFileSync(path.join(foreign, "notes.txt"), "mine");
      expect((await cli(["export", root, "-o", foreign])).err).toContain("EXPORT_DIR_INVALID");
      expect(fs.readdirSync(foreign)).toEqual(["notes.txt"]);
      expect((await cli(["export", root, "-o", foreign, "--format", "csv"])).err).toContain("EXPORT_FORMAT_UNKNOWN");
      expect((await cli(["export", root, "--format", "parquet"])).code).toBe(2);
    });

    it("without DuckDB only Parquet and fleet query fail (NATIVE_MODULE_UNAVAILABLE); NDJSON still exports", async () => {
      setDuckdbRequirer(() => {
        throw new Error("Cannot find module '@duckdb/node-bindings-linux-x64/duckdb.node'");
      });
      try {
        const out = path.join(scratch("hw-fexport-nd-"), "x");
        const pq = await cli(["export", path.join(root, "good"), "-o", out]);
        expect(pq.code).toBe(1);
        expect(pq.err).toContain("NATIVE_MODULE_UNAVAILABLE");
        const nd = await cli(["export", path.join(root, "good"), "-o", out + "-nd", "--format", "ndjson"]);
        expect(nd.code).toBe(0);
        const q = await cli(["fleet", "query", out + "-nd", "SELECT 1"]);
        expect(q.err).toContain("NATIVE_MODULE_UNAVAILABLE");
      } finally {
        setDuckdbRequirer(undefined);
      }
    });
  });
}
