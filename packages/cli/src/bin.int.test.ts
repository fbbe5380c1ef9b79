/**
 * The `hankweave-journal` executable: the prebuilt bundle (bin/bundle.mjs) must behave exactly like
 * the TypeScript sources run through tsx, rebuild itself when a source is newer, and fall back to
 * tsx when it cannot be built.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
// @ts-expect-error plain JS module without type declarations
import { buildBundle, ensureBundle, newestSourceMtime } from "../bin/bundle.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(HERE, "../bin/hankweave-journal.js");
const FIXTURE = path.resolve(HERE, "../../../fixtures/main-job/exec");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
function tempDir(tag: string): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `cli-bin-${tag}-`));
  dirs.push(d);
  return d;
}

function run(argv: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...argv], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 << 20,
    timeout: 120_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("the hankweave-journal executable", () => {
  beforeAll(async () => {
    // Make sure the real bundle is fresh before the comparisons (a fresh clone has none).
    expect(await ensureBundle()).toMatch(/hankweave-journal\.mjs$/);
  }, 60_000);

  it.each([
    ["--help", ["--help"]],
    ["stats --json", ["stats", FIXTURE, "--json"]],
    ["rebuild --stdout", ["rebuild", FIXTURE, "--stdout"]],
    ["audit --json", ["audit", FIXTURE, "--json"]],
    ["an error (missing execution)", ["stats", "/nonexistent/exec"]],
  ])("the bundle prints what the tsx sources print: %s", (_name, argv) => {
    const viaBundle = run(argv);
    const viaTsx = run(argv, { HANKWEAVE_NO_BUNDLE: "1" });
    expect(viaBundle.code).toBe(viaTsx.code);
    expect(viaBundle.out).toBe(viaTsx.out);
    expect(viaBundle.err).toBe(viaTsx.err);
    if (argv[0] !== "stats" || argv[1] !== "/nonexistent/exec") expect(viaBundle.out.length).toBeGreaterThan(0);
    else expect(viaBundle.err).toMatch(/^error [A-Z_]+: /);
  }, 60_000);

  it("diet (compression workers), restore, index and query (native modules) work from the bundle", () => {
    const exec = tempDir("roundtrip");
    fs.cpSync(FIXTURE, exec, { recursive: true });
    const journal = layoutOf(exec).journal;
    const sha = createHash("sha256").update(fs.readFileSync(journal)).digest("hex");
    const lines = JSON.parse(run(["stats", exec, "--json"]).out).lines as number;

    const diet = run(["diet", exec, "--json"]);
    expect(diet.code, diet.err).toBe(0);
    expect(fs.existsSync(journal)).toBe(false);
    const restore = run(["restore", exec, "--json"]);
    expect(restore.code, restore.err).toBe(0);
    expect(createHash("sha256").update(fs.readFileSync(journal)).digest("hex")).toBe(sha);

    expect(run(["index", exec]).code).toBe(0);
    const q = run(["query", exec, "select count(*) as n from events", "--json"]);
    expect(q.code, q.err).toBe(0);
    expect(JSON.stringify(JSON.parse(q.out))).toContain(`"n":${lines}`);
  }, 120_000);

  it("a native module that does not load costs only the commands that need it: NATIVE_MODULE_UNAVAILABLE, no stack trace, nothing lost", () => {
    // A preload makes require() of the named packages throw, as a binary built for another
    // Node.js does (better-sqlite3 after a Node upgrade without `npm rebuild`).
    const dir = tempDir("native");
    const preload = path.join(dir, "break-native.cjs");
    fs.writeFileSync(preload, [
      'const Module = require("node:module");',
      'const blocked = process.env.HANKWEAVE_TEST_BREAK_NATIVE.split(",");',
      "const load = Module._load;",
      "Module._load = function (request, ...rest) {",
      '  if (blocked.some((b) => request === b || request.startsWith(b + "/") || request.includes("/node_modules/" + b + "/"))) {',
      '    throw new Error("simulated: " + request + " was compiled against a different Node.js version\\nsecond line");',
      "  }",
      "  return load.call(this, request, ...rest);",
      "};",
    ].join("\n"));
    const broken = (what: string) => ({ NODE_OPTIONS: `--require ${preload}`, HANKWEAVE_TEST_BREAK_NATIVE: what });
    const exec = tempDir("native-exec");
    fs.cpSync(FIXTURE, exec, { recursive: true });
    const journal = layoutOf(exec).journal;
    const sha = createHash("sha256").update(fs.readFileSync(journal)).digest("hex");
    const refused = (r: { code: number | null; out: string; err: string }, pkg: string) => {
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(new RegExp(`^error NATIVE_MODULE_UNAVAILABLE: the native module ${pkg.replace("/", "\\/")} could not be loaded: simulated`));
      expect(r.err).toContain(`hint: reinstall it for this Node.js (${process.version}): npm rebuild ${pkg}`);
      expect(r.err).not.toMatch(/^\s+at /m);
      expect(r.err).not.toContain("second line");
    };

    // SQLite broken: reading, rebuilding and auditing run; index and query say why they cannot.
    const noSqlite = broken("better-sqlite3");
    for (const argv of [["stats", exec, "--json"], ["rebuild", exec, "--stdout"], ["audit", exec, "--json"]]) {
      const r = run(argv, noSqlite);
      expect(r.code, r.err).toBe(0);
      expect(r.out).toBe(run(argv).out);
    }
    refused(run(["index", exec], noSqlite), "better-sqlite3");
    refused(run(["query", exec, "select 1"], noSqlite), "better-sqlite3");

    // zstd broken: the plain journal still reads; diet refuses and leaves the journal as it was.
    const noZstd = broken("zstd-napi,@mongodb-js/zstd");
    expect(run(["stats", exec, "--json"], noZstd).code).toBe(0);
    const diet = run(["diet", exec, "--json"], noZstd);
    refused(diet, "zstd-napi");
    expect(JSON.parse(diet.out).error.code).toBe("NATIVE_MODULE_UNAVAILABLE");
    expect(createHash("sha256").update(fs.readFileSync(journal)).digest("hex")).toBe(sha);
    expect(fs.existsSync(layoutOf(exec).dietedJournal)).toBe(false);

    // A dieted journal with zstd broken: restore refuses and publishes nothing.
    expect(run(["diet", exec]).code).toBe(0);
    refused(run(["restore", exec], noZstd), "zstd-napi");
    expect(fs.existsSync(journal)).toBe(false);
    expect(run(["restore", exec]).code).toBe(0);
    expect(createHash("sha256").update(fs.readFileSync(journal)).digest("hex")).toBe(sha);
  }, 180_000);

  it("rebuilds a bundle older than a source file, and reports null when it cannot build", async () => {
    const root = tempDir("stale");
    const pkgs = path.join(root, "packages");
    fs.mkdirSync(path.join(pkgs, "p", "src"), { recursive: true });
    fs.writeFileSync(path.join(pkgs, "p", "package.json"), "{}");
    const entry = path.join(pkgs, "p", "src", "main.ts");
    fs.writeFileSync(entry, "export const answer: number = 41;\n");
    const out = path.join(root, "dist", "bundle.mjs");

    expect(await ensureBundle({ bundlePath: out, packagesDir: pkgs, entry })).toBe(out);
    expect(fs.readFileSync(out, "utf8")).toMatch(/answer = 41/);

    // A source newer than the bundle: rebuilt on the next call.
    fs.writeFileSync(entry, "export const answer: number = 42;\n");
    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(entry, later, later);
    expect(newestSourceMtime(pkgs)).toBeGreaterThan(fs.statSync(out).mtimeMs);
    expect(await ensureBundle({ bundlePath: out, packagesDir: pkgs, entry })).toBe(out);
    expect(fs.readFileSync(out, "utf8")).toMatch(/answer = 42/);
    expect(fs.statSync(out).mtimeMs).toBeGreaterThanOrEqual(newestSourceMtime(pkgs));

    // A fresh bundle is used as is (not rebuilt: its mtime does not move).
    const before = fs.statSync(out).mtimeMs;
    fs.utimesSync(out, new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    const fresh = fs.statSync(out).mtimeMs;
    expect(fresh).not.toBe(before);
    expect(await ensureBundle({ bundlePath: out, packagesDir: pkgs, entry })).toBe(out);
    expect(fs.statSync(out).mtimeMs).toBe(fresh);

    // A syntax error: no bundle, the shim falls back to tsx; no temp file is left behind.
    fs.writeFileSync(entry, "export const = ;\n");
    fs.utimesSync(entry, new Date(Date.now() + 20_000), new Date(Date.now() + 20_000));
    expect(await ensureBundle({ bundlePath: out, packagesDir: pkgs, entry })).toBeNull();
    await expect(buildBundle(entry, path.join(root, "dist", "other.mjs"))).rejects.toThrow();
    expect(fs.readdirSync(path.join(root, "dist")).filter((f) => f.includes(".tmp-"))).toEqual([]);
  }, 60_000);
});
