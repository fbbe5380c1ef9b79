import { mkdtempSync, readFileSync, writeFileSync, rmSync, existsSync, copyFileSync, appendFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { T, META } from "./test-support/builders.js";
import { openReader } from "@hankweave-journal/diet";
import { foldJournal } from "./fold-journal.js";
import { openStateEngine, type StateEngine } from "./state-engine.js";
import { serializeState } from "./state-file.js";
import { scenario, type Step } from "./test-support/scenario.js";

function tempExec(): string {
  return mkdtempSync(path.join(os.tmpdir(), "state-engine-"));
}

async function foldText(exec: string): Promise<string> {
  const reader = await openReader(exec);
  try {
    return serializeState((await foldJournal(reader)).state);
  } finally {
    await reader.close();
  }
}

function stateText(exec: string): string {
  return readFileSync(layoutOf(exec).state, "utf8");
}

async function runStep(e: StateEngine, s: Step): Promise<void> {
  if (s.kind === "transition") await e.transition(s.t);
  else if (s.kind === "plan") await e.setPlan(s.plan);
  else await e.append({ type: s.type, data: s.data });
}

describe("the state engine", () => {
  it("keeps state.json byte-identical to the fold of its journal after every step (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(10_000), { minLength: 1, maxLength: 40 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), async (choices, reals) => {
        const exec = tempExec();
        try {
          const e = await openStateEngine(exec, { durability: "none" });
          for (const s of scenario(choices, reals)) {
            await runStep(e, s);
            expect(stateText(exec)).toBe(await foldText(exec));
            expect(serializeState(e.state)).toBe(stateText(exec));
          }
          // The fold's lazy resultingState equals the one journaled with the last transition.
          const reader = await openReader(exec);
          const folded = await foldJournal(reader);
          await reader.close();
          expect(folded.resultingState).toEqual(e.resultingState);
          await e.close();
          expect(stateText(exec)).toBe(await foldText(exec));
        } finally {
          rmSync(exec, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  });

  it("with saveState 'close' writes state.json equal to the fold at close, and reopening finds it consistent", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none", saveState: "close" });
    for (const s of scenario(Array.from({ length: 300 }, (_, i) => (i * 7919) % 1000))) await runStep(e, s);
    await e.close();
    expect(stateText(exec)).toBe(await foldText(exec));
    const again = await openStateEngine(exec, { durability: "none" });
    expect(again.openReport.stateFile).toBe("consistent");
    expect(again.openReport.rewritten).toBe(false);
    expect(again.openReport.origin).toBe("native");
    await again.close();
  });

  it("journals the transition first with resultingState and the line's timestamp as the clock", async () => {
    const exec = tempExec();
    let ms = Date.parse("2026-01-02T03:04:05.000Z");
    const e = await openStateEngine(exec, { durability: "none", now: () => (ms += 7), random: () => 0.25 });
    const r = await e.transition(T.runStarted("r1", { serverPid: process.pid }));
    await e.close();
    const lines = readFileSync(layoutOf(exec).journal, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines[0].type).toBe("plan.updated");
    const ev = lines[r.line];
    expect(Object.keys(ev.data)).toEqual(["transitionType", "runId", "transition", "resultingState"]);
    expect(ev.data.resultingState).toEqual({ currentRunId: "r1", runCount: 1, totalCost: 0, currentRunCost: 0 });
    expect(JSON.parse(stateText(exec)).runs[0].startTime).toBe(ev.timestamp);
    expect(ev.id.startsWith(String(Date.parse(ev.timestamp)))).toBe(true);
  });

  it("rejects invalid transitions with the reducer's code and journals nothing", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    await e.transition(T.runStarted("r1", { serverPid: process.pid }));
    await e.transition(T.codonStarted("r1", "a"));
    const before = readFileSync(layoutOf(exec).journal);
    const cases: [unknown, string][] = [
      [T.codonTransitioned("r1", "a", "preparing", "running", META.running()), "INVALID_TRANSITION"],
      [T.codonTransitioned("r1", "a", "preparing", "failed", {}), "MISSING_METADATA"],
      [T.codonStarted("nope", "a"), "UNKNOWN_RUN"],
      [T.costsIncremented("r1", "zzz", 1), "UNKNOWN_CODON"],
      [{ type: "CodonStarted", data: null }, "MALFORMED_TRANSITION"],
    ];
    for (const [t, code] of cases) {
      const err = await e.transition(t as never).then(() => null, (x: unknown) => x);
      expect(isJournalError(err), `${code}: ${String(err)}`).toBe(true);
      expect((err as { code: string }).code).toBe(code);
    }
    expect(readFileSync(layoutOf(exec).journal).equals(before)).toBe(true);
    await e.close();
    expect(stateText(exec)).toBe(await foldText(exec));
  });

  it("journals a status-guarded no-op (info finding) and returns it", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    await e.transition(T.runStarted("r1", { serverPid: process.pid }));
    await e.transition(T.codonStarted("r1", "a"));
    const r = await e.transition(T.checkpointCreated("r1", "a", "completed", "abc"));
    expect(r.finding?.severity).toBe("info");
    expect(r.finding?.line).toBe(r.line);
    await e.close();
  });

  it("refuses state.transition through append()", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    await expect(e.append({ type: "state.transition", data: {} })).rejects.toMatchObject({ code: "INVALID_EVENT" });
    await e.close();
  });
});

describe("opening an execution whose state.json disagrees with the journal", () => {
  async function written(): Promise<string> {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    for (const s of scenario([1, 0, 0, 0, 0, 5, 2, 2, 3, 7, 8, 9])) await runStep(e, s);
    await e.close();
    return exec;
  }

  it("rewrites a corrupt state.json from the journal and reports it", async () => {
    const exec = await written();
    const good = stateText(exec);
    writeFileSync(layoutOf(exec).state, '{"runs": [tru');
    const e = await openStateEngine(exec, { durability: "none" });
    expect(e.openReport.stateFile).toBe("corrupt");
    expect(e.openReport.rewritten).toBe(true);
    await e.close();
    expect(stateText(exec)).toBe(good);
  });

  it("rewrites a deleted state.json when only state.json.bak is left, reporting bakOnly", async () => {
    const exec = await written();
    const good = stateText(exec);
    copyFileSync(layoutOf(exec).state, layoutOf(exec).stateBak);
    rmSync(layoutOf(exec).state);
    const e = await openStateEngine(exec, { durability: "none" });
    expect(e.openReport.stateFile).toBe("missing");
    expect(e.openReport.bakOnly).toBe(true);
    await e.close();
    expect(stateText(exec)).toBe(good);
  });

  it("rewrites a stale state.json (crash between append and save) and lists the differing paths", async () => {
    const exec = await written();
    const good = stateText(exec);
    const stale = JSON.parse(good);
    stale.runs[0].status = "weird";
    writeFileSync(layoutOf(exec).state, JSON.stringify(stale, null, 2));
    const e = await openStateEngine(exec, { durability: "none" });
    expect(e.openReport.stateFile).toBe("mismatch");
    expect(e.openReport.differences).toContain("runs[0].status");
    await e.close();
    expect(stateText(exec)).toBe(good);
  });

  it("rewrites a state.json from another execution and says so", async () => {
    const exec = await written();
    const good = stateText(exec);
    writeFileSync(layoutOf(exec).state, JSON.stringify({ runs: [{ runId: "elsewhere", codons: [] }], currentRunId: null, executionPlan: [] }, null, 2));
    const e = await openStateEngine(exec, { durability: "none" });
    expect(e.openReport.stateFile).toBe("other-execution");
    await e.close();
    expect(stateText(exec)).toBe(good);
  });

  it("refuses to replace a state.json with runs when the journal has no state events (the only copy)", async () => {
    const exec = tempExec();
    const l = layoutOf(exec);
    const { mkdirSync } = await import("node:fs");
    mkdirSync(l.hankweave, { recursive: true });
    const text = JSON.stringify({ runs: [{ runId: "r", codons: [] }], currentRunId: null, executionPlan: [] }, null, 2);
    writeFileSync(l.state, text);
    await expect(openStateEngine(exec, { durability: "none" })).rejects.toMatchObject({ code: "STATE_MISMATCH" });
    expect(readFileSync(l.state, "utf8")).toBe(text);
    expect(existsSync(l.lock)).toBe(false);
  });
});

describe("crash detection and the lock", () => {
  it("journals RunCrashed for a running run whose serverPid is dead", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    const deadPid = 2 ** 22 + 12345; // above the default pid_max: no such process
    await e.transition(T.runStarted("r1", { serverPid: deadPid }));
    await e.transition(T.codonStarted("r1", "a"));
    await e.transition(T.codonTransitioned("r1", "a", "preparing", "starting"));
    await e.close();
    const again = await openStateEngine(exec, { durability: "none", now: () => Date.parse("2030-01-01T00:00:00.000Z") });
    expect(again.openReport.crashedRuns).toEqual(["r1"]);
    const run = again.state.runs[0];
    expect(run.status).toBe("crashed");
    expect(run.endTime).toBe("2030-01-01T00:00:00.000Z");
    expect(run.codons[0]).toMatchObject({ status: "failed", failedDuring: "starting", exitCode: -1 });
    await again.close();
    const last = readFileSync(layoutOf(exec).journal, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l)).filter((x) => x.type === "state.transition").pop();
    expect(last.data.transition).toEqual({ type: "RunCrashed", data: { runId: "r1", detectedAt: "2030-01-01T00:00:00.000Z", lastCodonStatus: "starting" } });
    expect(stateText(exec)).toBe(await foldText(exec));
  });

  it("holds runtime.lock while open: a second engine is refused, and the lock is released at close", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    expect(existsSync(layoutOf(exec).lock)).toBe(true);
    await expect(openStateEngine(exec, { durability: "none" })).rejects.toMatchObject({ code: "LOCK_HELD" });
    await e.close();
    expect(existsSync(layoutOf(exec).lock)).toBe(false);
  });

  it("repairs a torn tail at open without losing it, and keeps the invariant", async () => {
    const exec = tempExec();
    const e = await openStateEngine(exec, { durability: "none" });
    await e.transition(T.runStarted("r1", { serverPid: process.pid }));
    await e.close();
    appendFileSync(layoutOf(exec).journal, '{"id":"1-x","timestamp":"2026');
    const again = await openStateEngine(exec, { durability: "none" });
    expect(again.openReport.journalRepair).not.toBeNull();
    await again.transition(T.codonStarted("r1", "a"));
    await again.close();
    expect(stateText(exec)).toBe(await foldText(exec));
  });
});
