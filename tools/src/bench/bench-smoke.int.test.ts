import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseBenchArgs } from "../bench.js";
import type { BenchResult } from "./harness.js";
import { REPO_ROOT } from "./measure.js";
import { TABLE_COLUMNS } from "./table.js";

const dir = mkdtempSync(join(tmpdir(), "hw-bench-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every operation the bench knows; each must produce one row per contender, measured or n/a. */
const OPERATIONS = [
  "append-none", "append-batch", "append-every", "read", "rebuild", "audit", "verify", "index",
  "diet-compatible", "diet-seekable", "diet-extended", "restore", "line-n", "cat-line",
];

describe("bench flags", () => {
  it("maps --profile, --quick, --smoke, --size and --only to options and rejects bad input", () => {
    expect(parseBenchArgs([]).opts).toMatchObject({ sizes: [100_000_000, 1_000_000_000], profiles: ["real"], freshBaselines: false });
    expect(parseBenchArgs(["--profile", "body-heavy"]).opts.profiles).toEqual(["body-heavy"]);
    expect(parseBenchArgs(["--profile", "all", "--fresh-baselines"]).opts).toMatchObject({ profiles: ["real", "body-heavy"], freshBaselines: true });
    expect(() => parseBenchArgs(["--profile", "v1"])).toThrow();
    expect(parseBenchArgs(["--quick"]).opts).toMatchObject({ sizes: [100_000_000], rounds: 3 });
    expect(parseBenchArgs(["--smoke"]).opts).toMatchObject({ rounds: 1, smoke: true });
    expect(parseBenchArgs(["--size", "10MB,20MB", "--only", "rebuild, diet"]).opts).toMatchObject({ sizes: [10_000_000, 20_000_000], only: ["rebuild", "diet"] });
    expect(() => parseBenchArgs(["--size", "lots"])).toThrow();
    expect(() => parseBenchArgs(["--quick", "--smoke"])).toThrow();
    expect(() => parseBenchArgs(["--rounds", "0"])).toThrow();
  });
});

describe("npm run bench -- --smoke", () => {
  it("prints a table with every column and one row per contender of every operation, and writes the JSON", async () => {
    const out = join(dir, "bench.json");
    // Async (not spawnSync): a blocked worker would starve vitest's RPC for the minute this takes.
    const r = await promisify(execFile)("node", ["--import", "tsx", "tools/src/bench.ts", "--smoke", "--work", join(dir, "work"), "--out", out, "--no-install"], {
      cwd: REPO_ROOT, encoding: "utf8", timeout: 400_000, maxBuffer: 16 * 1024 * 1024,
    });
    const header = r.stdout.split("\n")[0];
    for (const c of TABLE_COLUMNS) expect(header).toContain(c);
    const res = JSON.parse(readFileSync(out, "utf8")) as BenchResult;
    expect([...new Set(res.rows.map((x) => x.op))]).toEqual(OPERATIONS);
    for (const op of OPERATIONS) {
      const rows = res.rows.filter((x) => x.op === op);
      expect(rows.filter((x) => x.role === "ours").length, op).toBeGreaterThanOrEqual(1);
      expect(rows.filter((x) => x.role === "baseline").length, op).toBeGreaterThanOrEqual(1);
      for (const row of rows) {
        expect(["ok", "n/a"], `${op} ${row.contender}: ${row.note}`).toContain(row.status);
        if (row.status === "ok") {
          expect(row.medianMs).toBeGreaterThanOrEqual(0);
          expect(row.throughput).not.toBeNull();
          // Every measured row appears in the printed table.
          expect(r.stdout).toMatch(new RegExp(`${op}\\s+${row.contender.replace(/[()|.*+?^$\\[\]]/g, "\\$&")}`));
        }
      }
    }
    expect(res.rows.find((x) => x.op === "rebuild" && x.role === "ours")?.ratioTo).toBe("naive fold");
    expect(new Set(res.rows.map((x) => x.profile))).toEqual(new Set(["real"]));
    // The input is the real-shaped profile (schema v2), compared with plan-gen-execution when present.
    const names = res.profiles.map((p) => p.name);
    expect(names).toContain("real 400.0 KB");
    expect(res.profiles.find((p) => p.name === "real 400.0 KB")?.eventSchemaVersion).toBe(2);
    if (names.includes("plan-gen-execution")) expect(r.stdout).toContain("profiles beside plan-gen-execution");
    else console.warn("conformance/plan-gen-execution is absent: the comparison's reference row cannot be checked");
    // Every issue-18 target is present; an absent measurement is "NOT met", never skipped.
    for (const t of ["speed ≥ 0.8× zstd -3", "size ≤ 1.02× zstd -3", "smaller than zstd -19", "speed ≥ 10× zstd -19"]) {
      expect(res.targets.map((x) => x.target), t).toContain(t);
    }
    expect(res.targets.filter((t) => t.actual.startsWith("absent")).every((t) => t.met === false || t.reportOnly)).toBe(true);
    expect(res.targets.map((t) => t.op)).toEqual(expect.arrayContaining(["rebuild", "diet-compatible", "diet-extended", "restore", "index", "line-n", "cat-line"]));
    expect(r.stdout).toContain("targets:");
    expect(typeof res.machine.cpu).toBe("string");
    // Our children ran from the esbuild bundle (what the CLI bin runs), not through tsx.
    expect(res.runner).toBe("bundle");
    // The CLI as a process of its own (built beside the runner): restore from both diets and cat.
    const whole = res.rows.filter((x) => x.contender.endsWith(", whole process"));
    expect(whole.map((x) => `${x.op} ${x.contender} ${x.status}`)).toEqual([
      "restore ours (compatible), whole process ok", "restore ours (extended), whole process ok", "cat-line ours (extended), whole process ok",
    ]);
    expect(r.stdout).toContain("bundled runner");
  }, 420_000);
});
