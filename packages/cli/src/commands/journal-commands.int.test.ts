/** cat, stats and repair driven in-process through runCli, on copies of fixtures/journal. */
import { execFileSync, spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(HERE, "../../../../fixtures/journal");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(HERE, "../../../../../shared/conformance");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function copyFixture(name: string): string {
  const exec = mkdtempSync(path.join(os.tmpdir(), `cli-journal-${name}-`));
  dirs.push(exec);
  cpSync(path.join(FIXTURES, name), exec, { recursive: true });
  return exec;
}

function snapshot(exec: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(exec, p)] = readFileSync(p).toString("base64");
    }
  };
  walk(exec);
  return out;
}

async function cli(argv: string[]) {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), bytes: io.outBytes(), err: io.err() };
}

const journalOf = (exec: string) => readFileSync(layoutOf(exec).journal);

describe("cat", () => {
  it("prints the original line bytes, unchanged and in order", async () => {
    const exec = copyFixture("ok-small");
    const r = await cli(["cat", exec]);
    expect(r.code).toBe(0);
    expect(r.bytes.equals(journalOf(exec))).toBe(true);
  });

  it("filters by --type (repeatable), --from-line and --to-line", async () => {
    const exec = copyFixture("ok-small");
    const lines = journalOf(exec).toString().trimEnd().split("\n");
    const r = await cli(["cat", exec, "--type", "info", "--type", "tool.result"]);
    expect(r.out.trimEnd().split("\n")).toEqual(lines.filter((l) => /"type":"(info|tool\.result)"/.test(l)));
    const range = await cli(["cat", exec, "--from-line", "2", "--to-line", "3"]);
    expect(range.out).toBe(lines.slice(2, 4).join("\n") + "\n");
  });

  it("filters by --run and --codon on data.runId/codonId and data.transition.data.*", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "cli-journal-run-"));
    dirs.push(exec);
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    const ev = (id: string, type: string, data: unknown) => JSON.stringify({ id, timestamp: "2026-01-01T00:00:00.000Z", type, data }) + "\n";
    writeFileSync(layoutOf(exec).journal,
      ev("1", "state.transition", { transitionType: "RunStarted", transition: { type: "RunStarted", data: { runId: "A" } } }) +
      ev("2", "codon.started", { codonId: "c1", runId: "A" }) +
      ev("3", "codon.started", { codonId: "c2", runId: "B" }) +
      ev("4", "info", { message: "no ids" }));
    expect((await cli(["cat", exec, "--run", "A"])).out.split("\n").filter(Boolean).map((l) => JSON.parse(l).id)).toEqual(["1", "2"]);
    expect((await cli(["cat", exec, "--codon", "c2"])).out.split("\n").filter(Boolean).map((l) => JSON.parse(l).id)).toEqual(["3"]);
    expect((await cli(["cat", exec, "--run", "A", "--codon", "c2"])).out).toBe("");
  });

  it("reports corrupt lines on stderr and exits 1; a torn tail is a warning (exit 0)", async () => {
    const corrupt = await cli(["cat", copyFixture("corrupt-middle")]);
    expect(corrupt.code).toBe(1);
    expect(corrupt.err).toContain("CORRUPT_LINE");
    expect(corrupt.out.trimEnd().split("\n")).toHaveLength(6);
    const torn = await cli(["cat", copyFixture("torn-tail")]);
    expect(torn.code).toBe(0);
    expect(torn.err).toContain("TORN_TAIL");
  });

  it("exits 2 on bad usage and 1 with a stable code on a FIFO", async () => {
    expect((await cli(["cat"])).code).toBe(2);
    expect((await cli(["cat", "x", "--from-line", "abc"])).code).toBe(2);
    expect((await cli(["cat", "x", "--from-line", "5", "--to-line", "2"])).code).toBe(2);
    expect((await cli(["cat", "x", "--bogus"])).code).toBe(2);
    const exec = mkdtempSync(path.join(os.tmpdir(), "cli-journal-fifo-"));
    dirs.push(exec);
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    execFileSync("mkfifo", [layoutOf(exec).journal]);
    const r = await cli(["cat", exec]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("NOT_A_REGULAR_FILE");
  });

  it("--follow prints new lines as the journal grows, waits for a torn line to complete, stops on abort", async () => {
    const exec = copyFixture("ok-small");
    const original = journalOf(exec);
    const controller = new AbortController();
    const io = memoryIO({ signal: controller.signal });
    const running = runCli(["cat", exec, "--follow", "--poll-ms", "20"], io);
    const waitFor = async (pred: () => boolean): Promise<void> => {
      for (let i = 0; i < 500 && !pred(); i++) await new Promise((r) => setTimeout(r, 20));
      expect(pred()).toBe(true);
    };
    await waitFor(() => io.outBytes().length === original.length);
    const next = '{"id":"9-a","timestamp":"2026-01-01T00:00:00.000Z","type":"info","data":{"grown":true}}\n';
    appendFileSync(layoutOf(exec).journal, next.slice(0, 20));
    await new Promise((r) => setTimeout(r, 150));
    expect(io.outBytes().length).toBe(original.length);
    appendFileSync(layoutOf(exec).journal, next.slice(20) + next.replace("9-a", "9-b"));
    await waitFor(() => io.out().includes("9-b"));
    controller.abort();
    expect(await running).toBe(0);
    expect(io.out()).toBe(original.toString() + next + next.replace("9-a", "9-b"));
    expect(io.err()).not.toContain("TORN_TAIL");
  });
});

describe("stats", () => {
  it("counts lines, events by type and category; sidecar absent; exit 0; --json is stable", async () => {
    const exec = copyFixture("ok-small");
    const r = await cli(["stats", exec, "--json"]);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out);
    expect(s).toMatchObject({
      ok: true, kind: "plain", bytes: journalOf(exec).length, lines: 6, blankLines: 0, corruptLines: 0, events: 6,
      eventsByType: { info: 2, "state.transition": 2, "tool.result": 2 },
      eventsByCategory: { "server-state": 4, "agentic-backbone": 2 },
      tornTail: null, sidecar: { status: "absent", claims: null }, findings: [],
    });
    const human = await cli(["stats", exec]);
    expect(human.out).toContain("events       6");
  });

  it.each([
    ["torn-tail", 1, (s: any) => expect(s.tornTail).toEqual({ offset: s.bytes - 37, length: 37 })],
    ["corrupt-middle", 1, (s: any) => expect(s.corruptLines).toBe(1)],
    ["invalid-utf8", 1, (s: any) => expect(s.findings.map((f: any) => f.code)).toEqual(["INVALID_UTF8"])],
    ["empty", 0, (s: any) => expect(s.findings.map((f: any) => f.code)).toEqual(["EMPTY_JOURNAL"])],
    ["sidecar-larger", 0, (s: any) => expect([s.sidecar.status, s.findings[0].code]).toEqual(["lying", "SIDECAR_MISMATCH"])],
    ["sidecar-smaller", 0, (s: any) => expect([s.sidecar.status, s.sidecar.claims.totalEvents]).toEqual(["stale", 2])],
    ["sidecar-malformed", 0, (s: any) => expect([s.sidecar.status, s.findings[0].code]).toEqual(["invalid", "SIDECAR_INVALID"])],
  ])("%s: exit %i with the right finding, files unchanged", async (name, code, check) => {
    const exec = copyFixture(name);
    const before = snapshot(exec);
    const r = await cli(["stats", exec, "--json"]);
    expect(r.code).toBe(code);
    check(JSON.parse(r.out));
    expect(snapshot(exec)).toEqual(before);
  });
});

describe("repair", () => {
  it("--dry-run prints the plan and changes nothing", async () => {
    const exec = copyFixture("torn-tail");
    const before = snapshot(exec);
    const r = await cli(["repair", exec, "--dry-run", "--json"]);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.out);
    expect(o).toMatchObject({ ok: true, dryRun: true, applied: null, plan: { tornTail: { length: 37 } } });
    expect((await cli(["repair", exec, "--dry-run"])).out).toContain("would quarantine");
    expect(snapshot(exec)).toEqual(before);
  });

  it("quarantines the torn tail byte-exact, rewrites the sidecar, releases its lock", async () => {
    const exec = copyFixture("torn-tail");
    const original = journalOf(exec);
    const r = await cli(["repair", exec, "--json"]);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.out);
    const q = readFileSync(o.applied.quarantined);
    expect(Buffer.concat([journalOf(exec), q]).equals(original)).toBe(true);
    expect(existsSync(layoutOf(exec).lock)).toBe(false);
    expect(JSON.parse((await cli(["stats", exec, "--json"])).out)).toMatchObject({ ok: true, sidecar: { status: "ok" } });
    expect((await cli(["repair", exec])).out).toBe("nothing to repair\n");
  });

  it("refuses while a live process holds runtime.lock (LOCK_HELD), changing nothing", async () => {
    const exec = copyFixture("torn-tail");
    const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    try {
      writeFileSync(layoutOf(exec).lock, JSON.stringify({ pid: sleeper.pid, lockId: "x", runId: "r", startTime: new Date().toISOString(), lastHeartbeat: new Date().toISOString() }));
      const before = snapshot(exec);
      const r = await cli(["repair", exec]);
      expect(r.code).toBe(1);
      expect(r.err).toContain("LOCK_HELD");
      expect(snapshot(exec)).toEqual(before);
    } finally {
      sleeper.kill("SIGKILL");
    }
  });

  it("leaves corrupt lines alone and exits 1; refuses a dieted directory", async () => {
    const exec = copyFixture("corrupt-middle");
    const original = journalOf(exec);
    const r = await cli(["repair", exec]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("CORRUPT_LINE");
    expect(journalOf(exec).equals(original)).toBe(true);
    const dieted = await cli(["repair", copyFixture("dieted-pair")]);
    expect(dieted.code).toBe(1);
    expect(dieted.err).toContain("JOURNAL_DIETED");
  });
});

describe.runIf(existsSync(CONF))("cat on the conformance journals", () => {
  it("reproduces plan-gen-execution's events.jsonl byte for byte", async () => {
    const exec = path.join(CONF, "plan-gen-execution");
    const r = await cli(["cat", exec]);
    expect(r.code).toBe(0);
    expect(r.bytes.equals(journalOf(exec))).toBe(true);
  });
});
if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(existsSync(CONF)).toBe(false);
  });
}
