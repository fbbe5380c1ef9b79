/** `fleet ls` driven in-process through runCli: values against the fold, kinds, locks, filters, sort, bad roots. */
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf, totalCost } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { foldExecution } from "@hankweave-journal/state";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../../..");
const FIXTURES = path.join(REPO, "fixtures/diet");
const CONF = path.resolve(REPO, "../shared/conformance");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cli-fleet-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function cli(argv: string[]) {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

function jsonRows(out: string): Record<string, unknown>[] {
  return out.trim().split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A fleet: finished, running, dieted, live lock, stale lock, half pair, no journal. */
async function makeFleet(): Promise<string> {
  const root = path.join(tmp, "fleet");
  fs.cpSync(path.join(FIXTURES, "ok-finished-run"), path.join(root, "done"), { recursive: true });
  fs.cpSync(path.join(FIXTURES, "running-run"), path.join(root, "group/running"), { recursive: true });
  fs.cpSync(path.join(FIXTURES, "ok-finished-run"), path.join(root, "group/dieted"), { recursive: true });
  await applyDiet(path.join(root, "group/dieted"));
  fs.cpSync(path.join(FIXTURES, "ok-finished-run"), path.join(root, "live"), { recursive: true });
  const now = new Date().toISOString();
  fs.writeFileSync(layoutOf(path.join(root, "live")).lock, JSON.stringify({ pid: process.pid, lockId: "x", runId: null, startTime: now, lastHeartbeat: now }));
  fs.cpSync(path.join(FIXTURES, "ok-finished-run"), path.join(root, "stale"), { recursive: true });
  fs.writeFileSync(layoutOf(path.join(root, "stale")).lock, JSON.stringify({ pid: 2 ** 22 + 17, lockId: "y", startTime: now, lastHeartbeat: now }));
  fs.mkdirSync(layoutOf(path.join(root, "half")).eventsDir, { recursive: true });
  fs.writeFileSync(layoutOf(path.join(root, "half")).manifest, "{}");
  fs.mkdirSync(layoutOf(path.join(root, "empty")).hankweave, { recursive: true });
  return root;
}

describe("fleet ls", async () => {
  const root = await makeFleet();

  it("prints one row per execution with kind, runs, status, cost, events, bytes and lock from the fold", async () => {
    const r = await cli(["fleet", "ls", root, "--json"]);
    expect(r.code).toBe(0);
    const rows = jsonRows(r.out);
    expect(rows.map((x) => [x.rel, x.kind, x.code, x.lastStatus, x.lock])).toEqual([
      ["done", "plain", null, "completed", "none"],
      ["empty", "none", null, null, "none"],
      ["group/dieted", "compatible", null, "completed", "none"],
      ["group/running", "plain", null, "running", "none"],
      ["half", "broken", "HALF_PAIR", null, "none"],
      ["live", "plain", null, "completed", "live"],
      ["stale", "plain", null, "completed", "stale"],
    ]);
    const done = rows[0]!;
    const fold = await foldExecution(path.join(root, "done"));
    expect(done.runs).toBe(fold.state.runs.length);
    expect(done.totalCost).toBe(totalCost(fold.state));
    expect(done.lastEndTime).toBe(fold.state.runs[0]!.endTime);
    expect(done.storedBytes).toBe(fs.statSync(layoutOf(path.join(root, "done")).journal).size);
    // No sidecar in the fixture: events counted (27 complete JSON lines); the dieted one from its manifest.
    expect(done.events).toBe(27);
    expect(rows[2]!.events).toBe(27);
    expect(rows[2]!.storedBytes as number).toBeLessThan(done.storedBytes as number);
    const table = await cli(["fleet", "ls", root]);
    expect(table.out.split("\n")[0]).toMatch(/^PATH\s+KIND\s+RUNS\s+STATUS\s+ENDED\s+COST\s+EVENTS\s+BYTES\s+LOCK$/);
    expect(table.out).toMatch(/half\s+broken HALF_PAIR/);
  });

  it("filters by --status and --finished-before, sorts by --sort with --reverse", async () => {
    const running = jsonRows((await cli(["fleet", "ls", root, "--json", "--status", "running,none"])).out);
    expect(running.map((x) => x.rel)).toEqual(["empty", "group/running", "half"]);
    // The fixtures' runs ended in 2026-03: before 2026-04-01, not before 2026-01-01.
    expect(jsonRows((await cli(["fleet", "ls", root, "--json", "--finished-before", "2026-04-01"])).out)).toHaveLength(4);
    expect((await cli(["fleet", "ls", root, "--json", "--finished-before", "2026-01-01"])).out).toBe("");
    const byBytes = jsonRows((await cli(["fleet", "ls", root, "--json", "--sort", "bytes", "--reverse"])).out);
    const bytes = byBytes.map((x) => x.storedBytes).filter((b) => b !== null) as number[];
    expect(bytes).toEqual([...bytes].sort((a, b) => b - a));
    expect(byBytes.at(-1)!.storedBytes).toBeNull();
  });

  it("refuses bad roots and bad flags with their codes", async () => {
    const file = path.join(tmp, "file");
    fs.writeFileSync(file, "x");
    const f = await cli(["fleet", "ls", file]);
    expect(f.code).toBe(1);
    expect(f.err).toMatch(/^error FLEET_ROOT_INVALID/);
    expect((await cli(["fleet", "ls", root, "--status", "done"])).code).toBe(2);
    expect((await cli(["fleet", "ls", root, "--finished-before", "yesterday"])).code).toBe(2);
    expect((await cli(["fleet", "ls", root, "--sort", "size"])).code).toBe(2);
    expect((await cli(["fleet", "nope"])).err).toMatch(/unknown fleet subcommand/);
    expect((await cli(["fleet"])).code).toBe(2);
  });
});

describe("diet, verify and restore --all", async () => {
  const root = path.join(tmp, "batch");
  fs.cpSync(path.join(tmp, "fleet"), root, { recursive: true });

  it("--dry-run --json prints one line per execution with its outcome and code, then the summary; exit 1 when one would fail", async () => {
    const r = await cli(["diet", "--all", root, "--dry-run", "--json", "--jobs", "2"]);
    expect(r.code).toBe(1);
    const lines = jsonRows(r.out);
    const summary = lines.pop()!;
    const by = Object.fromEntries(lines.map((l) => [l.rel, [l.outcome, l.code]]));
    expect(by).toEqual({
      done: ["ok", null], stale: ["ok", null], "group/running": ["skipped", "RUN_NOT_FINISHED"], live: ["skipped", "LOCK_HELD"],
      "group/dieted": ["skipped", "ALREADY_DIETED"], half: ["failed", "HALF_PAIR"], empty: ["skipped", "JOURNAL_NOT_FOUND"],
    });
    expect(summary).toEqual({ summary: { operation: "diet", executions: 7, ok: 2, skipped: 4, failed: 1, dryRun: true, interrupted: false } });
    expect(fs.existsSync(layoutOf(path.join(root, "done")).journal)).toBe(true);
  });

  it("verify --all prints the summary table, failed first, and the totals line", async () => {
    const r = await cli(["verify", "--all", root, "--status", "completed"]);
    expect(r.code).toBe(0);
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toMatch(/^OUTCOME\s+PATH\s+KIND\s+CODE\s+WHAT$/);
    expect(lines.at(-1)).toMatch(/^verify --all .*: 4 executions, 4 ok, 0 skipped, 0 failed$/);
    const restore = await cli(["restore", "--all", root, "--dry-run"]);
    expect(restore.out).toMatch(/ok\s+group\/dieted\s+compatible\s+-\s+would restore/);
    expect(restore.out).toMatch(/failed\s+half\s+broken\s+HALF_PAIR/);
  });

  it("refuses --all with an <exec>, batch flags without --all, and a root that is a file", async () => {
    expect((await cli(["diet", "--all", root, path.join(root, "done")])).code).toBe(2);
    expect((await cli(["verify", path.join(root, "done"), "--jobs", "2"])).err).toMatch(/--jobs needs --all/);
    expect((await cli(["restore"])).code).toBe(2);
    const f = await cli(["diet", "--all", path.join(root, "done/README.md")]);
    expect([f.code, f.err.split(":")[0]]).toEqual([1, "error FLEET_ROOT_INVALID"]);
  });
});

describe.runIf(fs.existsSync(CONF))("fleet ls on the conformance executions", () => {
  it("lists each with the fold's runs, status and cost and the journal's event count", async () => {
    const rows = jsonRows((await cli(["fleet", "ls", CONF, "--json"])).out);
    expect(rows.length).toBeGreaterThanOrEqual(7);
    for (const row of rows) {
      if (row.kind === "none") {
        expect(row.rel).toBe("budget-exceeded-replay");
        expect(row.source).toBe("state.json");
        continue;
      }
      const fold = await foldExecution(row.path as string);
      expect([row.rel, row.runs, row.lastStatus, row.totalCost]).toEqual([row.rel, fold.state.runs.length, fold.state.runs[0]!.status, totalCost(fold.state)]);
      const lines = fs.readFileSync(layoutOf(row.path as string).journal, "utf8").split("\n").filter((l) => l.length > 0);
      expect(row.events).toBe(lines.length);
    }
    expect(rows.find((r) => r.rel === "plan-gen-execution")).toMatchObject({ events: 6467, lastStatus: "completed", kind: "plain" });
  });
});
describe.runIf(!fs.existsSync(CONF))("fleet ls on the conformance executions", () => {
  it("conformance folder is absent: these tests cannot run", () => {
    expect(fs.existsSync(CONF)).toBe(false);
  });
});
