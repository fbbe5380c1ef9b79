/**
 * The package as a user gets it: `npm pack` (its prepack builds dist/), `npm install -g` of the
 * tarball into an empty prefix, and `npm install` of it into a fresh ESM project. The installed
 * CLI runs on a conformance execution (fixtures/main-job when ../shared is absent) without tsx
 * and without writing into its install folder; a consumer program compiles under `tsc --strict`
 * against the shipped .d.ts and runs under plain node.
 *
 * Cost: building the two native modules (better-sqlite3, zstd-napi) with node-gyp costs ~190 s of
 * CPU (measured: 184.6 s user; sqlite3.c is one serial compile), over the suite's budget on a
 * loaded machine. `npm ci` of this checkout has just built the same versions of the same sources
 * for this Node.js, so by default both installs run with `--ignore-scripts` and the global one
 * gets the repo's `build/` folders of the two modules copied in (versions checked equal); with
 * HANKWEAVE_PACK_NATIVE_BUILD=1 the global install builds them itself (`--allow-scripts`, what a
 * user runs). The consumer needs no native module for reading and folding. Both installs use
 * npm's cache first (`--prefer-offline`): `npm ci` filled it.
 *
 * The build (`npm pack`'s prepack, tools/build.mjs: tsc with declarations of every package, ~23
 * CPU s) is skipped when dist/ is newer than every input of the build (package sources and
 * manifests, the tsconfigs, the build scripts, the README): `npm ci` (its `prepare`) has just built
 * it from these sources. A source edited since (or HANKWEAVE_PACK_BUILD=1) packs with the build.
 * The prepack hook itself is checked to be that build either way.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { memoryIO, runCli } from "@hankweave-journal/cli";

const PKG = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPO = path.resolve(PKG, "../..");
const CONF_EXEC = path.resolve(REPO, "../shared/conformance/plan-gen-execution");
const EXEC = fs.existsSync(CONF_EXEC) ? CONF_EXEC : path.join(REPO, "fixtures/main-job/exec");
const NATIVE = ["better-sqlite3", "zstd-napi"];
const BUILD_NATIVE = process.env.HANKWEAVE_PACK_NATIVE_BUILD === "1";
const PREPACK = "node ../../tools/build.mjs";

let tmp = "";
let tgz = "";
let packed: { size: number; unpackedSize: number; files: { path: string }[] };
let prefix = "";
let consumer = "";
const timings: Record<string, number> = {};
/** The consumer's `tsc --strict` compile, started as soon as its install is done (it overlaps the global install and the CLI test). */
let consumerTsc: Promise<{ code: number | null; out: string; err: string }> | undefined;

function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? tmp, env: opts.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => resolve({ code, out, err }));
  });
}
async function timed<T>(name: string, f: () => Promise<T>): Promise<T> {
  const t = Date.now();
  try {
    return await f();
  } finally {
    timings[name] = (Date.now() - t) / 1000;
  }
}
/** Path, size and mtime of every file under `dir`: what "nothing written into the install folder" compares. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const visit = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) visit(full);
      else {
        const st = fs.lstatSync(full);
        out.push(`${path.relative(dir, full)} ${st.size} ${st.mtimeMs}`);
      }
    }
  };
  visit(dir);
  return out.sort();
}
/** An environment without the repo's node_modules/.bin on PATH (so no tsx, no workspace bins). */
function cleanEnv(): NodeJS.ProcessEnv {
  const PATH = [path.join(prefix, "bin"), ...(process.env.PATH ?? "").split(":").filter((p) => !p.includes("node_modules"))].join(":");
  const env: NodeJS.ProcessEnv = { PATH, HOME: process.env.HOME, LANG: "C" };
  return env;
}

/** Every file's mtime under `dir` (no node_modules), folded with `pick`; `start` when there is none. */
function foldMtimes(dir: string, pick: (a: number, b: number) => number, start: number): number {
  let acc = start;
  const visit = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      if (e.name === "node_modules") continue;
      const full = path.join(d, e.name);
      if (e.isDirectory()) visit(full);
      else acc = pick(acc, fs.statSync(full).mtimeMs);
    }
  };
  if (fs.existsSync(dir)) visit(dir);
  return acc;
}

/** True when dist/ is complete and newer than every input of tools/build.mjs (so the build would redo it as is). */
function distIsFresh(): boolean {
  const dist = path.join(PKG, "dist");
  if (!fs.existsSync(path.join(dist, "bundle/cli.js")) || !fs.existsSync(path.join(dist, "index.d.ts"))) return false;
  const packages = path.join(REPO, "packages");
  let newest = 0;
  for (const p of fs.readdirSync(packages)) {
    newest = foldMtimes(path.join(packages, p, "src"), Math.max, newest);
    const manifest = path.join(packages, p, "package.json");
    if (fs.existsSync(manifest)) newest = Math.max(newest, fs.statSync(manifest).mtimeMs);
  }
  for (const f of ["tsconfig.json", "tsconfig.build.json", "tools/build.mjs", "tools/bundle.mjs", "README.md", "package.json"]) {
    newest = Math.max(newest, fs.statSync(path.join(REPO, f)).mtimeMs);
  }
  return foldMtimes(dist, Math.min, Infinity) > newest;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "hj-pack-"));
  // What packs the build: checked whether or not this run reuses a fresh dist/.
  expect(JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8")).scripts?.prepack).toBe(PREPACK);
  const reuse = process.env.HANKWEAVE_PACK_BUILD !== "1" && distIsFresh();
  const pack = await timed(reuse ? "npm pack (dist/ fresh: build skipped)" : "npm pack (build included)", () =>
    run("npm", ["pack", "--json", "--pack-destination", tmp, ...(reuse ? ["--ignore-scripts"] : [])], { cwd: PKG }));
  expect(pack.code, pack.err).toBe(0);
  packed = JSON.parse(pack.out)[0];
  tgz = path.join(tmp, (packed as unknown as { filename: string }).filename);
  prefix = path.join(tmp, "prefix");
  consumer = path.join(tmp, "consumer");
  fs.mkdirSync(consumer);
  fs.writeFileSync(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const common = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];
  const [global, local] = await Promise.all([
    timed(`npm install -g (${BUILD_NATIVE ? "native builds" : "--ignore-scripts"})`, () =>
      run("npm", ["install", "-g", "--prefix", prefix, ...(BUILD_NATIVE ? [`--allow-scripts=${NATIVE.join(",")}`] : ["--ignore-scripts"]), ...common, tgz])),
    timed("npm install (consumer, --ignore-scripts)", () => run("npm", ["install", "--ignore-scripts", ...common, tgz], { cwd: consumer })).then((r) => {
      if (r.code === 0) consumerTsc = startConsumerTsc();
      return r;
    }),
  ]);
  expect(global.code, global.err).toBe(0);
  expect(local.code, local.err).toBe(0);
  if (!BUILD_NATIVE) {
    for (const name of NATIVE) {
      const ours = path.join(REPO, "node_modules", name);
      const theirs = path.join(prefix, "lib/node_modules/hankweave-journal/node_modules", name);
      const version = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
      expect(version(theirs)).toBe(version(ours));
      fs.cpSync(path.join(ours, "build"), path.join(theirs, "build"), { recursive: true });
    }
  }
}, 1_200_000);

/** Copy the consumer sources, write its tsconfig and start `tsc` (asynchronous: a synchronous child would block this worker's event loop). */
function startConsumerTsc(): Promise<{ code: number | null; out: string; err: string }> {
  fs.copyFileSync(path.join(PKG, "src/test-consumer/consumer.ts"), path.join(consumer, "consumer.ts"));
  fs.copyFileSync(path.join(PKG, "src/test-consumer/readme-example.ts"), path.join(consumer, "readme-example.ts"));
  fs.writeFileSync(path.join(consumer, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      strict: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", outDir: "out", skipLibCheck: false,
      types: ["node"], typeRoots: [path.join(REPO, "node_modules/@types")],
    },
    files: ["consumer.ts", "readme-example.ts"],
  }));
  return timed("consumer tsc --strict", () => run(process.execPath, [path.join(REPO, "node_modules/typescript/bin/tsc"), "-p", consumer], { cwd: consumer }));
}

afterAll(() => {
  console.log(`pack test: ${JSON.stringify({ ...timings, tgzBytes: packed?.size, unpackedBytes: packed?.unpackedSize })}`);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the packed tarball", () => {
  it("holds the built JavaScript, the .d.ts, the bin, the licence and the README, and no tests or TypeScript sources", () => {
    const files = packed.files.map((f) => f.path);
    for (const f of ["bin/hankweave-journal.js", "dist/bundle/cli.js", "dist/bundle/zstd.worker.js", "dist/bundle/query.worker.js", "dist/index.js", "dist/index.d.ts", "dist/cli.js", "dist/cli/main.js", "LICENSE", "README.md", "package.json"]) {
      expect(files).toContain(f);
    }
    const offending = files.filter((f) => /\.test\.|\/testing\/|test-support|test-consumer|test-helpers|crash-child|arbitrary/.test(f) || (/\.ts$/.test(f) && !/\.d\.ts$/.test(f)));
    expect(offending).toEqual([]);
  });
});

describe("npm install -g <tgz> into an empty prefix", () => {
  it("gives a hankweave-journal command that prints what the sources print, writes nothing into its folder, and needs no tsx", async () => {
    const installed = path.join(prefix, "lib/node_modules/hankweave-journal");
    expect(fs.existsSync(path.join(installed, "node_modules/tsx"))).toBe(false);
    const before = snapshot(installed);
    const bin = path.join(prefix, "bin/hankweave-journal");
    const version = await run(bin, ["--version"], { env: cleanEnv() });
    expect(version.out.trim()).toBe(JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8")).version);
    const t = Date.now();
    const stats = await run(bin, ["stats", EXEC, "--json"], { env: cleanEnv() });
    timings["installed stats --json"] = (Date.now() - t) / 1000;
    expect(stats.err).toBe("");
    expect(stats.code).toBe(0);
    const io = memoryIO();
    expect(await runCli(["stats", EXEC, "--json"], io)).toBe(0);
    expect(stats.out).toBe(io.out());
    const audit = await run(bin, ["audit", EXEC, "--json"], { env: cleanEnv() });
    expect(audit.err).not.toMatch(/internal error/);
    expect(() => JSON.parse(audit.out.trim().split("\n").at(-1)!)).not.toThrow();
    // The native modules load: query builds the SQLite index (better-sqlite3) of a copy; diet and
    // restore compress and decompress through zstd.
    const copy = path.join(tmp, "exec-copy");
    fs.cpSync(path.join(REPO, "fixtures/main-job/exec"), copy, { recursive: true });
    const query = await run(bin, ["query", copy, "SELECT count(*) AS n FROM events"], { env: cleanEnv() });
    expect(query.code, query.err).toBe(0);
    expect(query.out).toMatch(/\d/);
    // The query runs in a child process from dist/bundle/query.worker.js, killed at --timeout.
    const endless = await run(bin, ["query", copy, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", "--no-update", "--timeout", "1"], { env: cleanEnv() });
    expect(endless.code).toBe(1);
    expect(endless.err).toMatch(/^error QUERY_TIMEOUT: /m);
    const journal = fs.readFileSync(path.join(copy, ".hankweave/events/events.jsonl"));
    const diet = await run(bin, ["diet", copy], { env: cleanEnv() });
    expect(diet.code, diet.err).toBe(0);
    expect(fs.existsSync(path.join(copy, ".hankweave/events/events.jsonl"))).toBe(false);
    const restore = await run(bin, ["restore", copy], { env: cleanEnv() });
    expect(restore.code, restore.err).toBe(0);
    expect(fs.readFileSync(path.join(copy, ".hankweave/events/events.jsonl")).equals(journal)).toBe(true);
    expect(snapshot(installed)).toEqual(before);
  });
});

describe("npm install <tgz> in a fresh ESM project", () => {
  it("gives a typed library: a consumer that reads, tails and folds compiles under tsc --strict and runs under plain node", async () => {
    expect(consumerTsc, "the consumer's install failed").toBeDefined();
    const tsc = await (consumerTsc as NonNullable<typeof consumerTsc>);
    expect(tsc.out + tsc.err).toBe("");
    expect(tsc.code).toBe(0);
    const r = await run(process.execPath, [path.join(consumer, "out/consumer.js"), EXEC], { cwd: consumer, env: cleanEnv() });
    expect(r.err).toBe("");
    const got = JSON.parse(r.out);
    expect(got.events).toBeGreaterThan(0);
    expect(got.tailLines).toHaveLength(3);
    expect(got.runs).toBeGreaterThan(0);
    expect(got.types).toBeGreaterThan(3);
    expect(got.code).toBe("EXEC_NOT_FOUND");
    expect(got.codeKnown).toBe(true);
    expect(got.cliExit).toBe(0);
    expect(got.cliEvents).toBe(got.events);
    expect(got.internalsExported).toEqual([]);
  });
});
