// The CLI's start-up loads no native module: better-sqlite3 and @mongodb-js/zstd load on first use
// (their loads took ~6.6 and ~14 ms of every start, `restore`, `cat` and `--version` included).
// A child process imports the CLI's entry with every command module, as the bin does, and lists
// the CommonJS modules it loaded.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const MAIN = path.join(REPO, "packages/cli/src/main.ts");

const loadedAfter = (code: string): string[] => {
  const script = `import { createRequire } from "node:module";
await import(${JSON.stringify(MAIN)});
${code}
console.log(JSON.stringify(Object.keys(createRequire(import.meta.url).cache)));`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: REPO, encoding: "utf8" });
  expect(r.stderr).toBe("");
  return JSON.parse(r.stdout.trim().split("\n").pop()!) as string[];
};

describe("native modules load on first use, not at the CLI's start", () => {
  it("importing the CLI loads neither better-sqlite3 nor @mongodb-js/zstd; asking for them does", () => {
    const atStart = loadedAfter("");
    expect(atStart.filter((p) => p.includes(`${path.sep}better-sqlite3${path.sep}`))).toEqual([]);
    expect(atStart.filter((p) => p.includes(`${path.sep}@mongodb-js${path.sep}zstd${path.sep}`))).toEqual([]);
    // The same listing sees them once they are used (so the check above can fail).
    const used = loadedAfter(`const { sqlite } = await import(${JSON.stringify(path.join(REPO, "packages/audit/src/sqlite.ts"))});
const { compressZstd } = await import(${JSON.stringify(path.join(REPO, "packages/cas/src/zstd.ts"))});
sqlite(); await compressZstd(Buffer.from("x"), 3);`);
    expect(used.some((p) => p.includes(`${path.sep}better-sqlite3${path.sep}`))).toBe(true);
    expect(used.some((p) => p.includes(`${path.sep}@mongodb-js${path.sep}zstd${path.sep}`))).toBe(true);
  });
});
