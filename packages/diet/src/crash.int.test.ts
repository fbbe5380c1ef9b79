import * as fs from "node:fs";
import * as path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "./diet.js";
import { verifyDiet } from "./verify-diet.js";
import { ensureRestored } from "./ensure-restored.js";
import { openDietedReader } from "./dieted-reader.js";
import { finishedJournal, linesToBytes, rmExec, tempExec } from "./test-helpers.js";

// Crash safety (format §5.1, §6): SIGKILL a child running diet / restore at random points — at a
// random hook between steps (other I/O in flight) or after a random delay — and check after
// every kill that the directory holds the intact original or a complete verified diet, and that
// a restore never published a partial events.jsonl. Bounded: ≥ 100 kills and ≤ 85 s per test.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
const CHILD = path.join(REPO, "node_modules/.cache/hankweave-diet-crash/crash-child.mjs");
const KILLS_REQUIRED = 100;
const WALL_MS = 85_000;
const WORKERS = 6;
const FRAME_BYTES = 4096;
const BODIES = ["a".repeat(6000), "é".repeat(5000), "b\n".repeat(3000), "a".repeat(6000)];
const ORIGINAL = finishedJournal(BODIES, "RunCompleted", 60);

beforeAll(async () => {
  // Bundle the child once so each spawn costs a plain `node` start, not a TypeScript loader.
  const esbuild = await import("esbuild");
  fs.mkdirSync(path.dirname(CHILD), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(HERE, "crash-child.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: CHILD,
    external: ["@mongodb-js/zstd", "@mongodb-js/zstd/*", "zstd-napi"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "error",
  });
  // The worker modules the bundle starts by URL beside itself (startWorker: `./zstd.worker.js`,
  // `./restore.worker.js`).
  for (const worker of ["packages/cas/src/zstd.worker.ts", "packages/diet/src/restore.worker.ts"]) {
    await esbuild.build({
      entryPoints: [path.join(REPO, worker)],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: path.join(path.dirname(CHILD), path.basename(worker).replace(/\.ts$/, ".js")),
      external: ["zstd-napi"],
      banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
      logLevel: "error",
    });
  }
}, 60_000);

function runChild(op: string, exec: string, killAt: number, delayMs: number | null): Promise<{ killed: boolean; out: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, op, exec, String(killAt), String(FRAME_BYTES)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    if (delayMs !== null) setTimeout(() => child.kill("SIGKILL"), delayMs);
    child.on("exit", (code, signal) => resolve({ killed: signal === "SIGKILL", out, code }));
  });
}

/** The invariant after a killed diet: intact original, or a complete verified diet (then restored for the next round). */
async function checkAfterDiet(exec: string): Promise<"original" | "dieted"> {
  const l = layoutOf(exec);
  if (fs.existsSync(l.journal)) {
    expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
    return "original";
  }
  const v = await verifyDiet(exec);
  expect(v.originalBytes).toBe(ORIGINAL.length);
  const r = await openDietedReader(exec);
  expect((await linesToBytes(r)).equals(ORIGINAL)).toBe(true);
  await r.close();
  await ensureRestored(exec);
  expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
  return "dieted";
}

async function crashLoop(op: "diet" | "restore", prepare: (exec: string) => Promise<void>, check: (exec: string) => Promise<void>, hooksGuess: number) {
  const start = Date.now();
  let kills = 0;
  let completed = 0;
  let rounds = 0;
  const worker = async (w: number) => {
    const exec = tempExec(ORIGINAL);
    await prepare(exec);
    try {
      while (kills < KILLS_REQUIRED && Date.now() - start < WALL_MS) {
        rounds++;
        const byHook = rounds % 3 !== 0;
        const killAt = byHook ? Math.floor(Math.random() * (hooksGuess + 2)) : -1;
        const delay = byHook ? null : 10 + Math.random() * 250;
        const r = await runChild(op, exec, killAt, delay);
        if (r.killed) kills++;
        else {
          expect(r.code, r.out).toBe(0);
          completed++;
        }
        await check(exec);
      }
    } finally {
      rmExec(exec);
    }
    return w;
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  return { kills, completed, rounds, ms: Date.now() - start };
}

describe("crash safety under SIGKILL", () => {
  it("diet: after every kill the directory holds the intact original or a complete verified diet", async () => {
    const outcomes = { original: 0, dieted: 0 };
    const res = await crashLoop(
      "diet",
      async () => undefined,
      async (exec) => {
        outcomes[await checkAfterDiet(exec)]++;
      },
      30,
    );
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(outcomes.original).toBeGreaterThan(0);
    expect(outcomes.dieted).toBeGreaterThan(0);
  }, 100_000);

  it("restore: a killed restore never publishes a partial events.jsonl, and the pair stays intact", async () => {
    let published = 0;
    const res = await crashLoop(
      "restore",
      async (exec) => {
        await applyDiet(exec, { frameTargetBytes: FRAME_BYTES });
      },
      async (exec) => {
        const l = layoutOf(exec);
        if (fs.existsSync(l.journal)) {
          expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
          published++;
          fs.rmSync(l.journal); // so the next round restores again
        }
        expect(fs.existsSync(l.dietedJournal) && fs.existsSync(l.manifest)).toBe(true);
      },
      ORIGINAL.length / FRAME_BYTES + 4,
    );
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(published).toBeGreaterThan(0);
    // The pair survived every kill and still verifies.
  }, 100_000);
});
