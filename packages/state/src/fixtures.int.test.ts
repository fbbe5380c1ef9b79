import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { diffStates } from "./diff-state.js";
import { foldExecution } from "./fold-journal.js";
import { openStateEngine } from "./state-engine.js";
import { serializeState } from "./state-file.js";

const FIX = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/state");

function copyCase(name: string): string {
  const dst = mkdtempSync(path.join(os.tmpdir(), `state-fixture-${name}-`));
  cpSync(path.join(FIX, name), dst, { recursive: true });
  return dst;
}
const okState = (): string => readFileSync(path.join(FIX, "ok-native/.hankweave/state.json"), "utf8");

describe("state fixtures (fixtures/state)", () => {
  it("ok-native: the fold equals state.json byte for byte and opening changes nothing", async () => {
    const exec = copyCase("ok-native");
    const fold = await foldExecution(exec);
    expect(fold.origin).toBe("native");
    expect(serializeState(fold.state)).toBe(okState());
    expect(fold.state.runs[0].codons.map((c) => c.status)).toEqual(["completed", "completed"]);
    const e = await openStateEngine(exec, { durability: "none", detectCrash: false });
    expect(e.openReport).toMatchObject({ stateFile: "consistent", rewritten: false });
    await e.close();
    expect(readFileSync(layoutOf(exec).state, "utf8")).toBe(okState());
    rmSync(exec, { recursive: true, force: true });
  });

  it("stale-state-after-crash: diff names the fields the last line changes; opening rewrites them", async () => {
    const exec = copyCase("stale-state-after-crash");
    const fold = await foldExecution(exec);
    const saved = JSON.parse(readFileSync(layoutOf(exec).state, "utf8"));
    expect(diffStates(fold.state, saved).map((d) => d.path)).toEqual(["runs[0].status", "runs[0].endTime", "currentRunId"]);
    const e = await openStateEngine(exec, { durability: "none", detectCrash: false });
    expect(e.openReport).toMatchObject({ stateFile: "mismatch", rewritten: true });
    expect(e.openReport.differences).toEqual(["runs[0].status", "runs[0].endTime (missing)", "currentRunId"]);
    await e.close();
    expect(readFileSync(layoutOf(exec).state, "utf8")).toBe(okState());
    rmSync(exec, { recursive: true, force: true });
  });

  it("corrupt-state-bak-only: a torn state.json is reported corrupt (bak present) and rewritten from the journal", async () => {
    const exec = copyCase("corrupt-state-bak-only");
    const e = await openStateEngine(exec, { durability: "none", detectCrash: false });
    expect(e.openReport).toMatchObject({ stateFile: "corrupt", bakOnly: true, rewritten: true });
    await e.close();
    expect(readFileSync(layoutOf(exec).state, "utf8")).toBe(okState());
    rmSync(exec, { recursive: true, force: true });
  });

  it("foreign-no-state: exact codon times, approximated run times and executionPlan", async () => {
    const exec = copyCase("foreign-no-state");
    const fold = await foldExecution(exec);
    expect(fold.origin).toBe("foreign");
    expect(fold.state.runs[0].codons[0]).toMatchObject({ startTime: "2026-03-05T18:46:56.081Z", endTime: "2026-03-05T18:47:02.448Z", status: "failed" });
    expect(fold.approximated.map((a) => [a.path, a.source, a.line])).toEqual([
      ["runs[0].startTime", "line-timestamp", 0], ["runs[0].endTime", "line-timestamp", 20], ["executionPlan", "initial", undefined],
    ]);
    rmSync(exec, { recursive: true, force: true });
  });
});
