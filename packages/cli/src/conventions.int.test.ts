/**
 * The CLI behaves like the tools people know (git, zstd, jq, sqlite3): --version, "did you mean",
 * one-line usage errors, `help <cmd>`, every flag documented with an example, `report -o -`,
 * `restore --dry-run`, `diet --dry-run` on a dieted directory, NOTHING_TO_RESTORE, `audit --json`
 * valid in failures, identifiers never cut, `query` saying where it builds the index, the index
 * counted by `diet`, and `<exec>` resolved once against the injected cwd in every command.
 */
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { COMMANDS } from "./commands.js";
import { memoryIO } from "./io.js";
import { runCli } from "./main.js";
import { VERSION } from "./version.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.resolve(HERE, "../../../fixtures/main-job/exec");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function copyFixture(tag: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `cli-conv-${tag}-`));
  dirs.push(root);
  const exec = path.join(root, "exec");
  fs.cpSync(FIXTURE, exec, { recursive: true });
  return exec;
}
async function cli(argv: string[], cwd = process.cwd()) {
  const io = memoryIO({ cwd });
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe("conventions of a command-line tool", () => {
  it("--version prints the package's version", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.resolve(HERE, "../../hankweave-journal/package.json"), "utf8"));
    expect(VERSION).toBe(pkg.version);
    expect(await cli(["--version"])).toEqual({ code: 0, out: `${pkg.version}\n`, err: "" });
  });

  it("a mistyped command gets one usage line with a suggestion, exit 2", async () => {
    const r = await cli(["stast", FIXTURE]);
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toBe('error USAGE: unknown command "stast" (did you mean stats?)\nsee `hankweave-journal --help`\n');
  });

  it("a mistyped flag gets one usage line with a suggestion and where to read more, not the whole help", async () => {
    const r = await cli(["audit", FIXTURE, "--jsno"]);
    expect(r.code).toBe(2);
    expect(r.err).toBe("error USAGE: unknown flag --jsno (did you mean --json?)\nsee `hankweave-journal audit --help`\n");
    const missing = await cli(["report", FIXTURE]);
    expect(missing.code).toBe(2);
    expect(missing.err.split("\n").filter(Boolean)).toHaveLength(2);
  });

  it("`help <cmd>` prints what `<cmd> --help` prints", async () => {
    for (const c of COMMANDS) {
      const a = await cli(["help", c.name]);
      const b = await cli([c.name, "--help"]);
      expect(a.code).toBe(0);
      expect(a.out).toBe(b.out);
    }
    expect((await cli(["help", "nope"])).code).toBe(2);
  });

  it("every --help lists every flag, and its examples use every flag", () => {
    for (const c of COMMANDS) {
      let flags: string[] = [];
      try {
        c.parseArgs(["--zz-not-a-flag"]);
      } catch (e) {
        if (!isJournalError(e)) throw e;
        flags = (e.details?.expected as string[] | undefined) ?? [];
      }
      const examples = c.help.slice(c.help.indexOf("Examples:"));
      expect(c.help, c.name).toContain("Examples:");
      for (const f of flags) {
        expect(c.help, `${c.name} ${f}`).toContain(f);
        const short = f === "--out" ? "-o" : f;
        expect(examples.includes(f) || examples.includes(` ${short} `), `${c.name}: no example uses ${f}`).toBe(true);
      }
    }
  });

  it("a usage error under --json still prints one JSON value on stdout", async () => {
    const r = await cli(["audit", FIXTURE, "--json", "--jsonl"]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out).error.code).toBe("USAGE");
  });
});

describe("commands", () => {
  it("report -o - writes the page to stdout and no file", async () => {
    const exec = copyFixture("report");
    const r = await cli(["report", "exec", "-o", "-"], path.dirname(exec));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^<!doctype html>/i);
    expect(fs.existsSync(path.join(path.dirname(exec), "-"))).toBe(false);
  });

  it("restore --dry-run says what restore would write and changes nothing; a plain or missing journal has nothing to restore", async () => {
    const exec = copyFixture("restore");
    const l = layoutOf(exec);
    const plain = await cli(["restore", exec]);
    expect(plain.code).toBe(1);
    expect(plain.err).toMatch(/^error NOTHING_TO_RESTORE: .*plain events\.jsonl/);
    const none = await cli(["restore", path.join(exec, "missing")]);
    expect(none.err).toMatch(/^error NOTHING_TO_RESTORE: .*no journal at all/);
    const original = fs.readFileSync(l.journal);
    expect((await cli(["diet", exec])).code).toBe(0);
    const listing = fs.readdirSync(l.eventsDir).sort();
    const dry = await cli(["restore", exec, "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.out)).toMatchObject({ ok: true, dryRun: true, would: "restore", originalBytes: original.length });
    expect(fs.readdirSync(l.eventsDir).sort()).toEqual(listing);
    const dietDry = await cli(["diet", exec, "--dry-run"]);
    expect(dietDry.code).toBe(0);
    expect(dietDry.out).toMatch(/already dieted: `diet` would re-verify/);
    expect((await cli(["restore", exec])).code).toBe(0);
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
  });

  it("audit --json is one valid JSON value when the journal cannot be read, before or after the output began", async () => {
    const missing = await cli(["audit", "/nonexistent/exec", "--json"]);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.out).ok).toBe(false);
    const exec = copyFixture("auditjson");
    const l = layoutOf(exec);
    fs.rmSync(l.journal);
    fs.mkdirSync(l.journal); // events.jsonl is a directory: the stream fails after `{"exec":…,"rows":[`
    const broken = await cli(["audit", exec, "--json"]);
    expect(broken.code).toBe(1);
    const parsed = JSON.parse(broken.out);
    expect(parsed.ok).toBe(false);
    expect(parsed.error.code).toMatch(/^[A-Z_]+$/);
    expect(broken.err).toMatch(new RegExp(`^error ${parsed.error.code}: `));
  });

  it("human output never cuts identifiers: long codon ids of loop iterations stay distinct", async () => {
    const exec = copyFixture("ids");
    const l = layoutOf(exec);
    const long = "implement-loop-step-7-implement-with-a-long-name";
    const text = fs.readFileSync(l.journal, "utf8").replaceAll('"step-7-implement', `"${long}`);
    fs.writeFileSync(l.journal, text);
    fs.rmSync(l.sidecar, { force: true });
    const ids = [...new Set([...text.matchAll(new RegExp(`"(${long}[^"]*)"`, "g"))].map((m) => m[1]!))];
    expect(ids.length).toBeGreaterThan(0);
    const r = await cli(["audit", exec]);
    for (const id of ids) expect(r.out, id).toContain(` ${id} `);
  });

  it("query says on stderr when it builds the index and where; diet counts the index in what it stores", async () => {
    const exec = copyFixture("query");
    const l = layoutOf(exec);
    const first = await cli(["query", exec, "SELECT count(*) AS n FROM events"]);
    expect(first.code).toBe(0);
    expect(first.err).toContain(`building the index at ${l.index}`);
    const second = await cli(["query", exec, "SELECT count(*) AS n FROM events"]);
    expect(second.err).not.toContain("building the index");
    const indexBytes = fs.statSync(l.index).size;
    const diet = await cli(["diet", exec, "--json"]);
    expect(diet.code).toBe(0);
    const stored = JSON.parse(diet.out).result.stored;
    expect(stored.indexBytes).toBe(indexBytes);
    expect(stored.totalBytes).toBe(stored.pointerJournalBytes + stored.casBytes + stored.manifestBytes + indexBytes);
    const human = await cli(["diet", exec]);
    expect(human.out).toContain(`+ index ${indexBytes}`);
  });

  it("every command resolves a relative <exec> against the injected cwd, not the process's", async () => {
    const plain = copyFixture("cwd");
    const cwd = path.dirname(plain);
    const dieted = path.join(cwd, "dieted");
    fs.cpSync(plain, dieted, { recursive: true });
    expect((await cli(["diet", dieted])).code).toBe(0);
    const argvOf: Record<string, string[]> = {
      query: ["query", "exec", "SELECT 1 AS one"], report: ["report", "exec", "-o", "-"], repair: ["repair", "exec", "--dry-run"],
      diet: ["diet", "exec", "--dry-run"], restore: ["restore", "dieted", "--dry-run"], state: ["state", "exec", "--at", "0"],
      blame: ["blame", "exec", "currentRunId"], export: ["export", "exec", "--format", "trace"], fleet: ["fleet", "ls", "exec"],
    };
    expect(fs.existsSync(path.join(process.cwd(), "exec"))).toBe(false);
    for (const c of COMMANDS) {
      const argv = argvOf[c.name] ?? [c.name, "exec"];
      const r = await cli(argv, cwd);
      expect(r.err, `${c.name}: ${r.err}`).not.toMatch(/EXEC_NOT_FOUND|JOURNAL_NOT_FOUND|NOTHING_TO_RESTORE|no journal/);
      expect(r.code, `${c.name}: ${r.err}`).toBeLessThan(2);
    }
  });
});
