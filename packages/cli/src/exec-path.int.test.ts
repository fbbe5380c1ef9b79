/**
 * The execution path enters once (issue 17 item 5, exec-path.ts): the progress line measures the
 * `<exec>` that runCli resolved, not a word of argv that looks like one, and the root forms
 * (`--all <root>`, `fleet ls <root>`, `export <root>`, `fleet query <dir>`) resolve against the
 * injected cwd like `<exec>` does (conventions.int.test.ts covers `<exec>` for every command).
 */
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { memoryIO } from "./io.js";
import { runCli } from "./main.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.resolve(HERE, "../../../fixtures/main-job/exec");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp cwd holding a copy of the fixture as `exec`. */
function cwdWithExec(tag: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `cli-exec-path-${tag}-`));
  dirs.push(root);
  fs.cpSync(FIXTURE, path.join(root, "exec"), { recursive: true });
  return root;
}

/** Every file under `dir` with its size and mtime (what a reader or writer would change). */
function filesOf(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).map((e) => {
    const p = path.join(e.parentPath, e.name);
    const st = fs.lstatSync(p);
    return `${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`;
  }).sort();
}

describe("the execution path enters once", () => {
  it("cat --type X <exec> measures <exec> for the progress line and never looks at a folder named X", async () => {
    const cwd = cwdWithExec("type");
    // A folder named like the --type value, holding an execution with a 5 GB (sparse) journal: a
    // second guess of the exec from argv would show "of 5.00 GB" instead of the fixture's 2.0 MB.
    const decoy = layoutOf(path.join(cwd, "codon.completed"));
    fs.mkdirSync(decoy.eventsDir, { recursive: true });
    fs.writeFileSync(decoy.journal, "");
    fs.truncateSync(decoy.journal, 5e9);
    const before = filesOf(path.join(cwd, "codon.completed"));
    const controller = new AbortController();
    const io = memoryIO({
      cwd, stderrIsTTY: true, signal: controller.signal,
      env: { HANKWEAVE_PROGRESS_AFTER_MS: "0", HANKWEAVE_PROGRESS_EVERY_MS: "5" },
    });
    // --follow keeps cat running (polling) until the abort, so the progress line is drawn.
    setTimeout(() => controller.abort(), 400);
    const code = await runCli(["cat", "--type", "codon.completed", "exec", "--follow", "--poll-ms", "20"], io);
    expect(code, io.err()).toBe(0);
    const lines = io.out().split("\n").filter(Boolean);
    expect(lines).toHaveLength(17);
    for (const l of lines) expect(JSON.parse(l).type).toBe("codon.completed");
    expect(io.err()).toMatch(/cat: [^\r]* of 2\.0 MB read/);
    expect(io.err()).not.toContain("GB");
    expect(filesOf(path.join(cwd, "codon.completed"))).toEqual(before);
  });

  it("the layout passed down never leaks into output: --json names the execution by its absolute path", async () => {
    const cwd = cwdWithExec("json");
    const exec = path.join(cwd, "exec");
    const table: { argv: string[]; exec: (json: any) => unknown }[] = [
      { argv: ["stats", "exec", "--json"], exec: (j) => j.exec },
      { argv: ["verify", "exec", "--json"], exec: (j) => j.exec },
      { argv: ["summary", "exec", "--json"], exec: (j) => j.exec },
      { argv: ["export", "exec", "--format", "trace"], exec: (j) => j.otherData.exec },
    ];
    for (const { argv, exec: execOf } of table) {
      const io = memoryIO({ cwd });
      expect(await runCli(argv, io), `${argv.join(" ")}: ${io.err()}`).toBeLessThan(2);
      expect(execOf(JSON.parse(io.out())), argv.join(" ")).toBe(exec);
    }
  });

  it("the root forms resolve <root> against the injected cwd, not the process's", async () => {
    const cwd = cwdWithExec("roots");
    fs.cpSync(path.join(cwd, "exec"), path.join(cwd, "second"), { recursive: true });
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "cli-exec-path-out-"));
    dirs.push(out);
    expect(fs.existsSync(path.join(process.cwd(), "exec"))).toBe(false);
    const execsIn = (json: string): number => JSON.parse(json.trim().split("\n").at(-1)!).summary.executions;
    const table: { argv: string[]; executions: (stdout: string) => number }[] = [
      { argv: ["diet", "--all", ".", "--dry-run", "--json"], executions: execsIn },
      { argv: ["verify", "--all", ".", "--json"], executions: execsIn },
      { argv: ["restore", "--all", ".", "--dry-run", "--json"], executions: execsIn },
      { argv: ["fleet", "ls", ".", "--json"], executions: (s) => s.trim().split("\n").filter((l) => JSON.parse(l).kind !== undefined).length },
      { argv: ["export", ".", "-o", path.join(out, "t"), "--format", "ndjson", "--json"], executions: (s) => JSON.parse(s).written },
    ];
    for (const { argv, executions } of table) {
      const io = memoryIO({ cwd });
      const code = await runCli(argv, io);
      expect(code, `${argv.join(" ")}: ${io.err()}`).toBeLessThan(2);
      expect(executions(io.out()), `${argv.join(" ")}: ${io.out()}`).toBe(2);
    }
    // fleet query <dir>: a relative export directory, against the injected cwd.
    const io = memoryIO({ cwd: out });
    expect(await runCli(["fleet", "query", "t", "SELECT count(DISTINCT execution_id) AS n FROM runs", "--json"], io), io.err()).toBe(0);
    expect(io.out()).toMatch(/"n":\s*2\b/);
  });
});
