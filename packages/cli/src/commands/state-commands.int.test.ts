import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(HERE, "../../../../../shared/conformance");

function copyExec(name: string): string {
  const dst = mkdtempSync(path.join(os.tmpdir(), `cli-state-${name}-`));
  cpSync(path.join(CONF, name), dst, { recursive: true });
  const fix = (p: string): void => {
    chmodSync(p, 0o755);
    for (const e of readdirSync(p, { withFileTypes: true })) {
      if (e.isDirectory()) fix(path.join(p, e.name));
      else chmodSync(path.join(p, e.name), 0o644);
    }
  };
  fix(dst);
  return dst;
}

async function cli(argv: string[]) {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(existsSync(CONF)).toBe(false);
  });
}

describe.runIf(existsSync(CONF))("rebuild", () => {
  it("--stdout prints exactly the saved state.json bytes for a reference journal", async () => {
    const exec = copyExec("budget-loop-replay");
    const r = await cli(["rebuild", exec, "--stdout"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(readFileSync(layoutOf(exec).state, "utf8"));
    rmSync(exec, { recursive: true, force: true });
  });

  it("rebuilds a dieted execution to the same bytes (read through the transparent reader)", async () => {
    const exec = copyExec("plan-gen-execution");
    const saved = readFileSync(layoutOf(exec).state, "utf8");
    expect((await cli(["diet", exec])).code).toBe(0);
    expect(existsSync(layoutOf(exec).journal)).toBe(false);
    const r = await cli(["rebuild", exec, "--stdout"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(saved);
    const at = JSON.parse((await cli(["state", exec, "--at", "3000", "--json"])).out);
    expect(at).toMatchObject({ line: 3000, transitions: 1246 });
    rmSync(exec, { recursive: true, force: true });
  });

  it("prints a summary by default and writes nothing", async () => {
    const exec = copyExec("budget-on-exceeded-fail-replay");
    const before = readFileSync(layoutOf(exec).stateBak);
    const r = await cli(["rebuild", exec]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/run 1772736415734-71q22 {2}failed {2}1 codons \(1 failed\)/);
    expect(r.out).toMatch(/state\.json: consistent/);
    expect(readFileSync(layoutOf(exec).stateBak).equals(before)).toBe(true);
    rmSync(exec, { recursive: true, force: true });
  });

  it("--json --no-carry reports approximated fields; --write rewrites state.json keeping the old one as .bak", async () => {
    const exec = copyExec("budget-loop-level-replay");
    const original = readFileSync(layoutOf(exec).state, "utf8");
    const j = JSON.parse((await cli(["rebuild", exec, "--json", "--no-carry"])).out);
    expect(j.origin).toBe("foreign");
    expect(j.carried).toEqual([]);
    expect(j.approximated.map((a: { path: string }) => a.path)).toEqual(["runs[0].startTime", "runs[0].endTime", "executionPlan"]);
    expect(j.stateFile).toBe("mismatch");
    expect(j.written).toBe(false);
    writeFileSync(layoutOf(exec).state, "garbage");
    const w = await cli(["rebuild", exec, "--write", "--json"]);
    expect(JSON.parse(w.out)).toMatchObject({ stateFile: "corrupt", written: true });
    // carried from .bak (the runtime's ladder): run endTime is approximated, the rest restored
    expect(readFileSync(layoutOf(exec).stateBak, "utf8")).toBe("garbage");
    const rebuilt = JSON.parse(readFileSync(layoutOf(exec).state, "utf8"));
    expect(rebuilt.executionPlan).toEqual(JSON.parse(original).executionPlan);
    rmSync(exec, { recursive: true, force: true });
  });

  it("refuses --stdout with --write, and --write with --no-carry (usage, exit 2)", async () => {
    expect((await cli(["rebuild", "x", "--stdout", "--write"])).code).toBe(2);
    expect((await cli(["rebuild", "x", "--write", "--no-carry"])).code).toBe(2);
  });

  it("fails with JOURNAL_NOT_FOUND (exit 1) on an execution without a journal", async () => {
    const exec = copyExec("budget-exceeded-replay");
    const r = await cli(["rebuild", exec]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error JOURNAL_NOT_FOUND/);
    rmSync(exec, { recursive: true, force: true });
  });
});

describe("rebuild never replaces the only copy of a state", () => {
  it("reports a state.json whose runs the journal does not have, and --write refuses (STATE_MISMATCH)", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "cli-state-onlycopy-"));
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    writeFileSync(layoutOf(exec).journal, JSON.stringify({ id: "1-a", timestamp: "2026-01-01T00:00:00.000Z", type: "info", data: { message: "x" } }) + "\n");
    const text = JSON.stringify({ runs: [{ runId: "r", codons: [] }], currentRunId: null, executionPlan: [] }, null, 2);
    writeFileSync(layoutOf(exec).state, text);
    const summary = await cli(["rebuild", exec, "--json"]);
    expect(summary.code).toBe(0);
    expect(JSON.parse(summary.out)).toMatchObject({ origin: "empty", stateFile: "other-execution", written: false });
    const w = await cli(["rebuild", exec, "--write"]);
    expect(w.code).toBe(1);
    expect(w.err).toMatch(/^error STATE_MISMATCH/);
    expect(readFileSync(layoutOf(exec).state, "utf8")).toBe(text);
    rmSync(exec, { recursive: true, force: true });
  });
});

describe.runIf(existsSync(CONF))("state --at", () => {
  it("gives the state as of a line, inclusive, as JSON", async () => {
    const exec = copyExec("budget-on-exceeded-fail-replay");
    const j = JSON.parse((await cli(["state", exec, "--at", "11", "--json"])).out);
    expect(j).toMatchObject({ kind: "line", line: 11, transitions: 6 });
    expect(j.resultingState.totalCost).toBe(0.0194805);
    expect(j.state.runs[0].codons[0].status).toBe("running");
    const byId = JSON.parse((await cli(["state", exec, "--at", "1772736420200-b2y6pzssd", "--json"])).out);
    expect(byId.line).toBe(11);
    rmSync(exec, { recursive: true, force: true });
  });

  it("prints the state.json form without --json, and BAD_CURSOR exits 1", async () => {
    const exec = copyExec("budget-on-exceeded-fail-replay");
    const r = await cli(["state", exec]);
    expect(r.out).toBe(readFileSync(layoutOf(exec).state, "utf8") + "\n");
    const bad = await cli(["state", exec, "--at", "yesterday"]);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^error BAD_CURSOR/);
    rmSync(exec, { recursive: true, force: true });
  });
});

describe.runIf(existsSync(CONF))("diff", () => {
  it("exits 0 when the fold equals state.json", async () => {
    const exec = copyExec("budget-global-uniform-replay");
    expect((await cli(["diff", exec])).code).toBe(0);
    rmSync(exec, { recursive: true, force: true });
  });

  it("lists differing paths and exits 1", async () => {
    const exec = copyExec("budget-global-uniform-replay");
    const s = JSON.parse(readFileSync(layoutOf(exec).state, "utf8"));
    s.runs[0].codons[1].endTime = "2000-01-01T00:00:00.000Z";
    writeFileSync(layoutOf(exec).state, JSON.stringify(s, null, 2));
    const r = await cli(["diff", exec]);
    expect(r.code).toBe(1);
    expect(r.out.split("\n")[0]).toMatch(/^runs\[0\]\.codons\[1\]\.endTime\t/);
    const j = JSON.parse((await cli(["diff", exec, "--json"])).out);
    expect(j.identical).toBe(false);
    expect(j.differences).toEqual([{ path: "runs[0].codons[1].endTime", kind: "value", fold: expect.any(String), saved: "2000-01-01T00:00:00.000Z" }]);
    rmSync(exec, { recursive: true, force: true });
  });

  it("--no-carry shows what the journal alone cannot give", async () => {
    const exec = copyExec("budget-loop-replay");
    const j = JSON.parse((await cli(["diff", exec, "--json", "--no-carry"])).out);
    expect(j.differences.map((d: { path: string }) => d.path).slice(0, 2)).toEqual(["runs[0].startTime", "runs[0].endTime"]);
    rmSync(exec, { recursive: true, force: true });
  });
});
