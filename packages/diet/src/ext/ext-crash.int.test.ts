import * as fs from "node:fs";
import * as path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { verifyDiet } from "../verify-diet.js";
import { ensureRestored } from "../ensure-restored.js";
import { openReader } from "../open-reader.js";
import { finishedJournal, linesToBytes, rmExec, tempExec } from "../test-helpers.js";
import { applyExtDiet } from "./ext-diet.js";

// Crash safety of the extended diet (format §5.1, §5.2, §6), with the harness of ../crash.int.test.ts:
// SIGKILL a child running the extended diet / its restore at a random hook (between records,
// frames and the steps of the sequence, other I/O in flight) or after a random delay; after every
// kill the directory holds the intact original or a complete verified diet, and a restore never
// published a partial events.jsonl. Bounded: ≥ 100 kills and ≤ 70 s per test (about 10 s on an idle 2-core machine).

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../../..");
const CHILD = path.join(REPO, "node_modules/.cache/hankweave-diet-crash/ext-crash-child.mjs");
const KILLS_REQUIRED = 100;
const WALL_MS = 70_000;
const WORKERS = 6;
const BODIES = ["a".repeat(6000), "é".repeat(5000), "b\n".repeat(3000), "a".repeat(6000)];
// A torn final fragment too: it must survive as is.
const ORIGINAL = Buffer.concat([finishedJournal(BODIES, "RunCompleted", 60), Buffer.from('{"id":"1-x","torn":')]);

beforeAll(async () => {
  const esbuild = await import("esbuild");
  fs.mkdirSync(path.dirname(CHILD), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(HERE, "ext-crash-child.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: CHILD,
    external: ["@mongodb-js/zstd", "@mongodb-js/zstd/*", "zstd-napi", "zstd-napi/*"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "error",
  });
}, 60_000);

function runChild(op: string, exec: string, killAt: number, delayMs: number | null): Promise<{ killed: boolean; out: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CHILD, op, exec, String(killAt)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    if (delayMs !== null) setTimeout(() => child.kill("SIGKILL"), delayMs);
    child.on("exit", (code, signal) => resolve({ killed: signal === "SIGKILL", out, code }));
  });
}

async function crashLoop(op: "diet" | "restore", prepare: (exec: string) => Promise<void>, check: (exec: string) => Promise<void>, hooksGuess: number) {
  const start = Date.now();
  let kills = 0;
  let rounds = 0;
  const worker = async () => {
    const exec = tempExec(ORIGINAL);
    await prepare(exec);
    try {
      while (kills < KILLS_REQUIRED && Date.now() - start < WALL_MS) {
        rounds++;
        const byHook = rounds % 3 !== 0;
        const r = await runChild(op, exec, byHook ? Math.floor(Math.random() * (hooksGuess + 2)) : -1, byHook ? null : 10 + Math.random() * 250);
        if (r.killed) kills++;
        else expect(r.code, r.out).toBe(0);
        await check(exec);
      }
    } finally {
      rmExec(exec);
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, () => worker()));
  return { kills, rounds };
}

describe("extended diet: crash safety under SIGKILL", () => {
  it("diet: after every kill the directory holds the intact original or a complete verified extended diet", async () => {
    const outcomes = { original: 0, dieted: 0 };
    const res = await crashLoop("diet", async () => undefined, async (exec) => {
      const l = layoutOf(exec);
      if (fs.existsSync(l.journal)) {
        expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
        outcomes.original++;
        return;
      }
      expect(JSON.parse(fs.readFileSync(l.manifest, "utf8")).ext.format).toBe("hwx-columnar");
      expect((await verifyDiet(exec)).originalBytes).toBe(ORIGINAL.length);
      const r = await openReader(exec);
      expect((await linesToBytes(r)).equals(ORIGINAL)).toBe(true);
      await r.close();
      await ensureRestored(exec);
      expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
      outcomes.dieted++;
    }, 90);
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(outcomes.original).toBeGreaterThan(0);
    expect(outcomes.dieted).toBeGreaterThan(0);
  }, 90_000);

  it("restore: a killed restore never publishes a partial events.jsonl, and the extended pair stays intact", async () => {
    let published = 0;
    const res = await crashLoop("restore", async (exec) => {
      await applyExtDiet(exec, { force: true, workers: 0, blockTargetBytes: 2048, packFrameTargetBytes: 1024 });
    }, async (exec) => {
      const l = layoutOf(exec);
      if (fs.existsSync(l.journal)) {
        expect(fs.readFileSync(l.journal).equals(ORIGINAL)).toBe(true);
        published++;
        fs.rmSync(l.journal);
      }
      expect(fs.existsSync(l.dietedJournal) && fs.existsSync(l.manifest)).toBe(true);
      expect((await verifyDiet(exec)).originalBytes).toBe(ORIGINAL.length);
    }, 40);
    expect(res.kills).toBeGreaterThanOrEqual(KILLS_REQUIRED);
    expect(published).toBeGreaterThan(0);
  }, 90_000);
});
