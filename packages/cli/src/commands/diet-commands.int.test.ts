/** diet and restore driven in-process through runCli; cat and stats on dieted directories. */
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(HERE, "../../../../fixtures/diet");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function copyFixture(name: string): string {
  const exec = fs.mkdtempSync(path.join(os.tmpdir(), `cli-diet-${name}-`));
  dirs.push(exec);
  fs.cpSync(path.join(FIXTURES, name), exec, { recursive: true });
  return exec;
}

async function cli(argv: string[]) {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), bytes: io.outBytes(), err: io.err() };
}

describe("diet and restore commands", () => {
  it("--dry-run --json prints the plan (bodies to move, expected sizes) and changes nothing", async () => {
    const exec = copyFixture("ok-finished-run");
    const before = fs.readFileSync(layoutOf(exec).journal);
    const r = await cli(["diet", exec, "--dry-run", "--json"]);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.out);
    expect(o.ok).toBe(true);
    expect(o.dryRun).toBe(true);
    expect(o.plan.bodies.moved).toBe(3);
    expect(o.plan.bodies.unique).toBe(2);
    expect(o.plan.moves.map((m: { key: string }) => m.key)).toEqual(["content", "content", "content"]);
    expect(o.plan.expectedPointerBytes).toBeLessThan(before.length);
    expect(fs.readFileSync(layoutOf(exec).journal).equals(before)).toBe(true);
    expect(fs.existsSync(layoutOf(exec).dietedJournal)).toBe(false);
  });

  it("diet, then cat and stats read the dieted directory transparently, then restore gives the bytes back", async () => {
    const exec = copyFixture("ok-finished-run");
    const l = layoutOf(exec);
    const original = fs.readFileSync(l.journal);
    const plainStats = JSON.parse((await cli(["stats", exec, "--json"])).out);
    const d = await cli(["diet", exec, "--json"]);
    expect(d.code).toBe(0);
    const res = JSON.parse(d.out).result;
    expect(res.status).toBe("dieted");
    expect(res.kind).toBe("compatible");
    expect(JSON.parse(fs.readFileSync(l.manifest, "utf8"))).toMatchObject({ dietVersion: 1, framing: "one-frame" });
    expect(res.stored.totalBytes).toBeLessThan(original.length);
    expect(fs.existsSync(l.journal)).toBe(false);

    const cat = await cli(["cat", exec]);
    expect(cat.code).toBe(0);
    expect(cat.bytes.equals(original)).toBe(true);
    const stats = JSON.parse((await cli(["stats", exec, "--json"])).out);
    expect(stats.kind).toBe("dieted");
    expect(stats.events).toBe(plainStats.events);
    expect(stats.eventsByType).toEqual(plainStats.eventsByType);
    expect(stats.bytes).toBe(original.length);

    const again = await cli(["diet", exec]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/^already-dieted/);

    const r = await cli(["restore", exec, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).result.status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
    const r2 = await cli(["--restore-journal", exec]);
    expect(r2.code).toBe(0);
    expect(r2.out).toMatch(/^already-restored/);
  });

  it("accepts --diet-journal and --bodies extended (dietVersion 2)", async () => {
    const exec = copyFixture("ok-finished-run");
    const r = await cli(["--diet-journal", exec, "--bodies", "extended", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).result.dietVersion).toBe(2);
    expect(JSON.parse(fs.readFileSync(layoutOf(exec).manifest, "utf8")).dietVersion).toBe(2);
    expect(JSON.parse(r.out).result.kind).toBe("extended");
  });

  it("--kind names the diet kind from the flag to the manifest; --seekable and --bodies are its aliases", async () => {
    const exec = copyFixture("ok-finished-run");
    for (const [flags, kind] of [[["--kind", "seekable"], "seekable"], [["--bodies", "compatible", "--kind", "compatible"], "compatible"], [["--kind", "extended"], "extended"]] as const) {
      expect(JSON.parse((await cli(["diet", exec, "--dry-run", "--json", ...flags])).out).plan.kind).toBe(kind);
    }
    const r = await cli(["diet", exec, "--seekable"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("(seekable, dietVersion 1, verified)");
    const m = JSON.parse(fs.readFileSync(layoutOf(exec).manifest, "utf8"));
    expect([m.dietVersion, m.framing]).toEqual([1, "seekable"]);
    // Already dieted: the kind comes back from the manifest.
    expect(JSON.parse((await cli(["diet", exec, "--json"])).out).result).toMatchObject({ status: "already-dieted", kind: "seekable" });
  });

  it("refuses an unfinished run with exit 1 and a code, nothing changed; --force diets it", async () => {
    const exec = copyFixture("running-run");
    const before = fs.readFileSync(layoutOf(exec).journal);
    const r = await cli(["diet", exec, "--json"]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).error.code).toBe("RUN_NOT_FINISHED");
    expect(r.err).toMatch(/^error RUN_NOT_FINISHED/);
    expect(fs.readFileSync(layoutOf(exec).journal).equals(before)).toBe(true);
    expect((await cli(["diet", exec, "--dry-run"])).code).toBe(1);
    expect((await cli(["diet", exec, "--force"])).code).toBe(0);
  });

  it("exits 2 on bad usage", async () => {
    expect((await cli(["diet"])).code).toBe(2);
    expect((await cli(["diet", "/x", "--bodies", "all"])).code).toBe(2);
    expect((await cli(["diet", "/x", "--bodies", "seekable"])).code).toBe(2);
    expect((await cli(["diet", "/x", "--kind", "all"])).code).toBe(2);
    const clash = await cli(["diet", "/x", "--kind", "extended", "--seekable"]);
    expect(clash.code).toBe(2);
    expect(clash.err).toMatch(/--kind extended and --seekable ask for different diet kinds/);
    expect((await cli(["diet", "/x", "--bodies", "extended", "--seekable"])).code).toBe(2);
    expect((await cli(["restore", "/x", "/y"])).code).toBe(2);
  });

  it("restore of a plain directory without a manifest says there is nothing to restore (NOTHING_TO_RESTORE)", async () => {
    const exec = copyFixture("ok-finished-run");
    const r = await cli(["restore", exec]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error NOTHING_TO_RESTORE: .*nothing to restore/);
  });
});
