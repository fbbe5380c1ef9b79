import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { startWorker, workerEntryOf } from "./worker-start.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..", "..");
const echo = new URL("./testing/echo-worker.js", import.meta.url);

function ask(entry: URL): Promise<unknown> {
  const worker = startWorker(entry, { workerData: { hello: "world" }, argv: ["--flag"] });
  return new Promise((resolve, reject) => {
    worker.once("message", (m) => { void worker.terminate(); resolve(m); });
    worker.once("error", reject);
    worker.postMessage({ n: 21 });
  }).finally(() => void worker.terminate());
}

const tmp = mkdtempSync(join(tmpdir(), "worker-start-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("startWorker", () => {
  it("starts a TypeScript worker from the sources (under vitest) with its workerData and argv unchanged", async () => {
    expect(workerEntryOf(echo).source?.pathname).toMatch(/testing\/echo-worker\.ts$/);
    const answer = (await ask(echo)) as { workerData: unknown; argv: string[]; doubled: number };
    expect(answer.doubled).toBe(42);
    expect(answer.workerData).toEqual({ hello: "world" });
    expect(answer.argv[0]).toBe(fileURLToPath(echo).replace(/\.js$/, ".ts"));
    expect(answer.argv.slice(1)).toEqual(["--flag"]);
  });

  it("starts the same worker from the sources when the main thread runs under tsx (npm start)", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", join(here, "testing", "echo-main.ts")], { cwd: repo, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({
      viaTsx: true,
      answer: { workerData: { hello: "world" }, argv: [join(here, "testing", "echo-worker.ts"), "--flag"], doubled: 42 },
    });
  });

  it("starts the built .js worker with plain node, no tsx and no .ts beside it (the built package)", () => {
    // A tiny dist: the helper and the echo modules compiled to .js, nothing else.
    const dist = join(tmp, "dist");
    for (const f of ["worker-start.ts", "testing/echo-main.ts", "testing/echo-worker.ts", "testing/echo-dep.ts"]) {
      const js = ts.transpileModule(readFileSync(join(here, f), "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
      }).outputText;
      mkdirSync(dirname(join(dist, f)), { recursive: true });
      writeFileSync(join(dist, f.replace(/\.ts$/, ".js")), js);
    }
    writeFileSync(join(tmp, "package.json"), JSON.stringify({ type: "module" }));
    expect(existsSync(join(dist, "testing", "echo-worker.ts"))).toBe(false);
    const r = spawnSync(process.execPath, [join(dist, "testing", "echo-main.js")], {
      cwd: tmp, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "" },
    });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({
      viaTsx: false,
      answer: { workerData: { hello: "world" }, argv: [join(dist, "testing", "echo-worker.js"), "--flag"], doubled: 42 },
    });
  });

  it("refuses code from strings and a module that does not exist", () => {
    expect(() => startWorker(echo, { eval: true } as never)).toThrow(TypeError);
    expect(() => workerEntryOf(new URL("./testing/no-such-worker.js", import.meta.url))).toThrow(/worker module not found/);
    expect(() => workerEntryOf(new URL("data:text/javascript,1"))).toThrow(TypeError);
  });
});
