import { existsSync, readFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { mkdtempSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { CONF, copyExecution, journalLines, plantDefects, writeJournal, writeSyntheticExecution } from "@hankweave-journal/audit/testing";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe("audit, index, query, report, verify on a synthetic execution", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cli-audit-"));
  const exec = path.join(dir, "synthetic");
  writeSyntheticExecution(exec);

  it("audit prints one row per transition and a summary; --json is one object; --jsonl one object per line", async () => {
    const text = await cli(["audit", exec]);
    expect(text.code).toBe(0);
    expect(text.out).toContain("running→failed");
    expect(text.out).toMatch(/64 rows of 64 transitions, 82 events \(plain\); 0 errors/);
    const json = await cli(["audit", exec, "--json"]);
    const obj = JSON.parse(json.out);
    expect(Object.keys(obj)).toEqual(["exec", "rows", "findings", "summary"]);
    expect(obj.rows).toHaveLength(64);
    expect(obj.findings).toEqual([]);
    const jsonl = (await cli(["audit", exec, "--jsonl", "--codon", "test"])).out.trim().split("\n").map((l) => JSON.parse(l));
    expect(jsonl.filter((o) => o.record === "row").every((o) => o.codon === "test")).toBe(true);
    expect(jsonl[jsonl.length - 1].record).toBe("summary");
  });

  it("audit rejects bad flags with a usage error (exit 2)", async () => {
    expect((await cli(["audit", exec, "--from-line", "x"])).code).toBe(2);
    expect((await cli(["audit", exec, "--json", "--jsonl"])).code).toBe(2);
    expect((await cli(["audit"])).code).toBe(2);
  });

  it("index then query prints a table and JSON; a write statement fails with QUERY_INVALID (exit 1)", async () => {
    const idx = await cli(["index", exec, "--json"]);
    expect(idx.code).toBe(0);
    expect(JSON.parse(idx.out)).toMatchObject({ mode: "full", events: 82, transitions: 64 });
    const q = await cli(["query", exec, "SELECT outcome, count(*) AS n FROM codon_attempts GROUP BY outcome ORDER BY outcome"]);
    expect(q.code).toBe(0);
    expect(q.out).toMatch(/^outcome\s+n\n/);
    expect(q.out).toContain("crashed");
    const qj = JSON.parse((await cli(["query", exec, "SELECT outcome, count(*) AS n FROM codon_attempts GROUP BY outcome ORDER BY outcome", "--json"])).out);
    expect(qj.rows).toEqual([
      { outcome: "completed", n: 5 }, { outcome: "crashed", n: 1 }, { outcome: "failed", n: 1 }, { outcome: "running", n: 1 }, { outcome: "skipped", n: 1 },
    ]);
    const before = readFileSync(layoutOf(exec).index);
    const bad = await cli(["query", exec, "DELETE FROM events", "--json"]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out).error.code).toBe("QUERY_INVALID");
    expect(bad.err).toMatch(/^error QUERY_INVALID/);
    expect(readFileSync(layoutOf(exec).index).equals(before)).toBe(true);
  });

  it("report writes one HTML file with a bar per codon attempt", async () => {
    const out = path.join(dir, "r.html");
    const r = await cli(["report", exec, "-o", out, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ runs: 2, attempts: 9 });
    expect((readFileSync(out, "utf8").match(/data-codon-attempt=/g) ?? []).length).toBe(9);
    expect((await cli(["report", exec])).code).toBe(2);
  });

  it("verify prints its checks and one summary line; exit 0 when clean", async () => {
    const v = await cli(["verify", exec]);
    expect(v.code).toBe(0);
    expect(v.out.trim().split("\n").pop()).toMatch(/^verify .*: OK — plain journal, 82 events/);
  });
});

describe.runIf(existsSync(CONF))("audit exit codes on planted defects", () => {
  it("exits 1 on an error finding and 0 on warnings only", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    const plants = plantDefects(journalLines(exec));
    writeJournal(exec, plants.RESULTING_STATE_MISMATCH.text);
    const bad = await cli(["audit", exec]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/\n\s+30\s+error\s+RESULTING_STATE_MISMATCH/);
    writeJournal(exec, plants.TIME_BACKWARDS.text);
    const warn = await cli(["audit", exec, "--json"]);
    expect(warn.code).toBe(0);
    expect(JSON.parse(warn.out).findings.map((f: { code: string }) => f.code)).toContain("TIME_BACKWARDS");
    expect((await cli(["verify", exec])).code).toBe(0);
    writeJournal(exec, plants.TORN_TAIL.text);
    expect((await cli(["verify", exec])).code).toBe(1);
  });
});
