/**
 * Crash safety FOR REAL, under the engine's DEFAULT options (durability `every` for the journal and
 * state.json alike: the write-ahead log is never less durable than its projection): child
 * processes drive the engine and are SIGKILLed — right after a transition append (before apply +
 * save, via the injected engine hook) and at random moments — at least 100 times, in bounded wall
 * time. After every kill:
 * - every transition the child saw acknowledged (transition() resolved) is in the journal, at its
 *   line, with its id;
 * - the state.json left behind is the fold of the whole surviving journal or of the journal
 *   without its last state line (write-ahead: state.json is never ahead of the journal);
 * - reopening yields a state equal (byte for byte) to the fold of the surviving journal, and
 *   writes it to state.json.
 * The child is bundled once by the shared crash-child helper so 100+ kills fit the time budget.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { bundleCrashChild, runCrashChild, type KillPlan } from "@hankweave-journal/journal/testing";
import { foldJournal } from "./fold-journal.js";
import { openStateEngine } from "./state-engine.js";
import { serializeState, readStateFile } from "./state-file.js";
import { prng } from "./test-support/scenario.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
let BUNDLE = "";
const KILLS_WANTED = 100;
const LANES = 6;
const WALL_BUDGET_MS = 85_000;

beforeAll(async () => {
  BUNDLE = await bundleCrashChild(path.join(HERE, "test-support/crash-child.ts"), "state-crash-child");
}, 60_000);

async function foldText(exec: string, toLine?: number): Promise<{ text: string; lastLine: number | null }> {
  const reader = await openReader(exec);
  try {
    const f = await foldJournal(reader, toLine === undefined ? {} : { toLine });
    return { text: serializeState(f.state), lastLine: f.lastLine };
  } finally {
    await reader.close();
  }
}

interface Ack { line: number; id: string }

/** Run one child; resolve with how it ended and what it acknowledged. */
async function runChild(exec: string, seed: number, mode: { afterAppend: number } | { delayMs: number }): Promise<{ signal: string | null; acks: Ack[]; durability: string | null }> {
  const plan: KillPlan = "delayMs" in mode ? { afterReadyMs: mode.delayMs } : {};
  const r = await runCrashChild(BUNDLE, [exec, String(seed), "600", String("afterAppend" in mode ? mode.afterAppend : 0)], plan);
  if (!r.killed && r.code !== 0) throw new Error(`child failed (${r.code}): ${r.stderr}`);
  const lines = r.stdout.split("\n");
  lines.pop(); // a partially printed line is not an acknowledgement we can read
  const acks = lines.filter((l) => l.startsWith("ack ")).map((l) => {
    const [, line, id] = l.split(" ");
    return { line: Number(line), id: id as string };
  });
  const ready = lines.find((l) => l.startsWith("ready "));
  return { signal: r.killed ? "SIGKILL" : null, acks, durability: ready ? ready.slice(6) : null };
}

let prefixCases = 0;

let acksChecked = 0;

async function checkAfterKill(exec: string, acks: Ack[]): Promise<void> {
  const l = layoutOf(exec);
  // No acknowledged transition is lost: each is in the journal at its line, with its id.
  const journalLines = readFileSync(l.journal, "utf8").split("\n");
  for (const a of acks) {
    expect(JSON.parse(journalLines[a.line] as string).id, `acknowledged line ${a.line} lost`).toBe(a.id);
    acksChecked += 1;
  }
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
  it(`under default options, ≥ ${KILLS_WANTED} kills lose no acknowledged transition and state.json is never ahead of the journal`, async () => {
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
          const { signal, acks, durability } = await runChild(exec, seed, mode);
          if (durability !== null) expect(durability, "the default durability").toBe("every");
          if (signal === "SIGKILL") {
            kills += 1;
            if ("afterAppend" in mode) afterAppendKills += 1;
          }
          await checkAfterKill(exec, acks);
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
    expect(acksChecked).toBeGreaterThan(kills);
    console.info(`state crash safety (default options): ${kills} kills (${afterAppendKills} right after an append), ${acksChecked} acknowledged transitions checked, ${prefixCases} kills left state.json one line behind, 0 ahead`);
    expect(Date.now() - started).toBeLessThan(WALL_BUDGET_MS + 15_000);
  }, 120_000);
});
