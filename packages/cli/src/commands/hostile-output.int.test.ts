// Classes 5–7 of issue 14 at the CLI: control bytes escaped in human output (JSON exact),
// counts keyed by journal data, and a stable code on every non-zero exit.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { writeSyntheticExecution } from "@hankweave-journal/audit/testing";
import { bundleCli } from "@hankweave-journal/journal/testing";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";

/** The CLI of the sources as a real process, bundled once (what bin/hankweave-journal.js runs, without tsx's start). */
let BIN = "";
beforeAll(async () => {
  BIN = await bundleCli();
}, 60_000);

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "cli-hostile-"));
function execWith(name: string, lines: string[]): string {
  const exec = path.join(dir, name);
  mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  writeFileSync(layoutOf(exec).journal, lines.map((l) => l + "\n").join(""));
  return exec;
}
const ev = (i: number, type: string, data: unknown = {}): string =>
  JSON.stringify({ id: `${1000 + i}-x${i}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), type, data });
// ESC ] 0 ; title BEL (retitle), ESC [ 2 J (clear screen), a C1 CSI, a bidi override
const EVIL = "evil\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202e";

describe("terminal injection: human output escapes control bytes, JSON stays exact", () => {
  const exec = execWith("evil", [ev(0, EVIL), ev(1, "info", { codonId: EVIL }), ev(2, "state.transition", {
    transitionType: "RunStarted", runId: EVIL, transition: { type: "RunStarted", data: { runId: EVIL } },
  })]);
  const raw = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;

  it("stats, audit, query, rebuild and verify print no raw control byte", async () => {
    for (const argv of [["stats", exec], ["audit", exec], ["query", exec, "SELECT type, codon, run FROM events"], ["rebuild", exec], ["verify", exec]]) {
      const r = await cli(argv);
      expect(raw.test(r.out), `${argv[0]} stdout`).toBe(false);
      expect(raw.test(r.err), `${argv[0]} stderr`).toBe(false);
    }
    expect((await cli(["stats", exec])).out).toContain("evil\\x1b]0;pwned\\x07");
  });

  it("--json output keeps the exact strings", async () => {
    const s = JSON.parse((await cli(["stats", exec, "--json"])).out);
    expect(s.eventsByType[EVIL]).toBe(1);
    const q = JSON.parse((await cli(["query", exec, "SELECT codon FROM events WHERE line = 1", "--json"])).out);
    expect(q.rows[0].codon).toBe(EVIL);
  });
});

describe("counts keyed by journal data: __proto__, constructor, toString are ordinary types", () => {
  const exec = execWith("proto", [ev(0, "__proto__"), ev(1, "__proto__"), ev(2, "constructor"), ev(3, "toString"), ev(4, "hasOwnProperty")]);
  it("stats --json counts each exactly", async () => {
    const s = JSON.parse((await cli(["stats", exec, "--json"])).out);
    expect(Object.entries(s.eventsByType)).toEqual(expect.arrayContaining([["__proto__", 2], ["constructor", 1], ["toString", 1], ["hasOwnProperty", 1]]));
    expect(s.events).toBe(5);
    expect((await cli(["stats", exec])).out).not.toContain("function");
  });

  it("a duplicate type key is one type for cat --type, stats and index (JSON.parse's last wins)", async () => {
    const dup = execWith("dup", ['{"id":"1-a","timestamp":"2026-01-01T00:00:00.000Z","type":"info","data":{},"type":"error"}', ev(1, "info")]);
    const s = JSON.parse((await cli(["stats", dup, "--json"])).out);
    expect(s.eventsByType).toMatchObject({ error: 1, info: 1 });
    const lines = (out: string): string[] => out.split("\n").filter((l) => l.length > 0);
    expect(lines((await cli(["cat", dup, "--type", "error"])).out)).toHaveLength(1);
    expect(lines((await cli(["cat", dup, "--type", "info"])).out)).toEqual([ev(1, "info")]);
    const q = JSON.parse((await cli(["query", dup, "SELECT type, count(*) AS n FROM events GROUP BY type ORDER BY type", "--json"])).out);
    expect(q.rows).toEqual([{ type: "error", n: 1 }, { type: "info", n: 1 }]);
  });
});

describe("every non-zero exit names a stable code", () => {
  it("rebuild of a journal with a corrupt line, a BOM, a NUL or a non-object line prints error CODE", async () => {
    const cases = {
      corrupt: [ev(0, "info"), "{not json", ev(2, "info")],
      bom: ["\ufeff" + ev(0, "info"), ev(1, "info")],
      nul: [ev(0, "info"), "\u0000\u0000", ev(2, "info")],
      array: [ev(0, "info"), "[1,2]", ev(2, "info")],
    };
    for (const [name, lines] of Object.entries(cases)) {
      const r = await cli(["rebuild", execWith(`rebuild-${name}`, lines)]);
      expect(r.code, name).toBe(1);
      expect(r.err, name).toMatch(/^error CORRUPT_LINE: /m);
      expect(r.err).not.toMatch(/\n\s+at /);
    }
  });

  it("a bare invocation says USAGE (exit 2)", async () => {
    const r = await cli([]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^error USAGE: /);
  });

  it("diet --dry-run of an unfinished run prints error RUN_NOT_FINISHED", async () => {
    const exec = path.join(dir, "running");
    writeSyntheticExecution(exec);
    const r = await cli(["diet", exec, "--dry-run"]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error RUN_NOT_FINISHED: /m);
  });

  it("a full stdout device (/dev/full) exits 1 with NO_SPACE, not 13 silently (real process)", () => {
    const exec = execWith("full", [ev(0, "info")]);
    for (const argv of [["stats", exec], ["cat", exec]]) {
      const r = spawnSync("sh", ["-c", `exec "${process.execPath}" "${BIN}" ${argv.map((a) => `'${a}'`).join(" ")} > /dev/full`], { encoding: "utf8", timeout: 60_000 });
      expect(r.status, argv[0]).toBe(1);
      expect(r.stderr).toMatch(/^error NO_SPACE: /m);
    }
  });
});
