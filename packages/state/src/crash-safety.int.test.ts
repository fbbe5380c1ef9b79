/**
 * Crash safety FOR REAL: child processes drive the engine and are SIGKILLed — right after a
 * transition append (before apply + save, via HANKWEAVE_STATE_KILL_AFTER_APPEND) and at random
 * moments — at least 100 times, in bounded wall time. After every kill:
 * - the state.json left behind is the fold of the whole surviving journal or of the journal
 *   without its last state line (write-ahead: state.json is never ahead of the journal);
 * - reopening yields a state equal (byte for byte) to the fold of the surviving journal, and
 *   writes it to state.json.
 * The child is bundled once with the esbuild that tsx ships (`node --import tsx` costs ~1.4 s of
 * startup per child on this machine; the bundle ~0.5 s), so 100+ kills fit the time budget.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { foldJournal } from "./fold-journal.js";
import { openStateEngine } from "./state-engine.js";
import { serializeState, readStateFile } from "./state-file.js";
import { prng } from "./test-support/scenario.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
// Inside the repo's node_modules so the bundle's external native imports resolve.
const BUNDLE = path.join(REPO, "node_modules/.cache/hankweave-state/crash-child.mjs");
const KILLS_WANTED = 100;
const LANES = 6;
const WALL_BUDGET_MS = 85_000;

beforeAll(async () => {
  const req = createRequire(createRequire(import.meta.url).resolve("tsx/package.json"));
  const esbuild = (await import(req.resolve("esbuild"))) as typeof import("esbuild");
  mkdirSync(path.dirname(BUNDLE), { recursive: true });
  await esbuild.build({
    entryPoints: [path.join(HERE, "test-support/crash-child.ts")], bundle: true, platform: "node", format: "esm",
    outfile: BUNDLE, external: ["@mongodb-js/zstd", "better-sqlite3"], logLevel: "warning",
  });
});

async function foldText(exec: string, toLine?: number): Promise<{ text: string; lastLine: number | null }> {
  const reader = await openReader(exec);
  try {
    const f = await foldJournal(reader, toLine === undefined ? {} : { toLine });
    return { text: serializeState(f.state), lastLine: f.lastLine };
  } finally {
    await reader.close();
  }
}

/** Run one child; resolve with how it ended. */
function runChild(exec: string, seed: number, mode: { afterAppend: number } | { delayMs: number }): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.HANKWEAVE_STATE_KILL_AFTER_APPEND;
    if ("afterAppend" in mode) env.HANKWEAVE_STATE_KILL_AFTER_APPEND = String(mode.afterAppend);
    const child = spawn(process.execPath, [BUNDLE, exec, String(seed), "600"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.on("data", (d: Buffer) => {
      if ("delayMs" in mode && d.toString().includes("ready")) setTimeout(() => child.kill("SIGKILL"), mode.delayMs);
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`child failed (${code}): ${err}`));
      else resolve(signal);
    });
  });
}

let prefixCases = 0;

async function checkAfterKill(exec: string): Promise<void> {
  const l = layoutOf(exec);
  const whole = await foldText(exec);
  const saved = await readStateFile(l.state);
  if (saved.kind === "ok" && saved.text !== whole.text) {
    // Killed between append and save: state.json must be the fold without the last state line.
    const before = await foldText(exec, (whole.lastLine ?? 0) - 1);
    expect(saved.text, "state.json is neither the fold of the journal nor of its prefix").toBe(before.text);
    prefixCases += 1;
  }
  const e = await openStateEngine(exec, { durability: "none", detectCrash: false });
  const after = await foldText(exec); // after the writer's torn-tail repair
  expect(serializeState(e.state)).toBe(after.text);
  await e.close();
  expect(readFileSync(l.state, "utf8")).toBe(after.text);
}

describe("crash safety under SIGKILL", () => {
  it(`reopening after ≥ ${KILLS_WANTED} kills always yields the fold of the surviving journal`, async () => {
    const started = Date.now();
    let kills = 0;
    let afterAppendKills = 0;
    const lane = async (n: number): Promise<void> => {
      const exec = mkdtempSync(path.join(os.tmpdir(), `state-crash-${n}-`));
      const rnd = prng(1000 + n);
      try {
        for (let i = 0; kills < KILLS_WANTED && Date.now() - started < WALL_BUDGET_MS; i++) {
          const seed = n * 10_000 + i;
          const mode = i % 2 === 0 ? { afterAppend: 1 + Math.floor(rnd() * 15) } : { delayMs: Math.floor(rnd() * 40) };
          const signal = await runChild(exec, seed, mode);
          if (signal === "SIGKILL") {
            kills += 1;
            if ("afterAppend" in mode) afterAppendKills += 1;
          }
          await checkAfterKill(exec);
        }
      } finally {
        rmSync(exec, { recursive: true, force: true });
      }
    };
    await Promise.all(Array.from({ length: LANES }, (_, n) => lane(n)));
    expect(kills).toBeGreaterThanOrEqual(KILLS_WANTED);
    expect(afterAppendKills).toBeGreaterThanOrEqual(KILLS_WANTED / 2 - LANES);
    // The append-then-die window was really hit: state.json lagged the journal by one line.
    expect(prefixCases).toBeGreaterThanOrEqual(afterAppendKills / 2);
    expect(Date.now() - started).toBeLessThan(WALL_BUDGET_MS + 15_000);
  }, 120_000);
});
