import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { diffStates } from "./diff-state.js";
import { foldExecution, foldJournal } from "./fold-journal.js";
import { openStateEngine } from "./state-engine.js";
import { serializeState } from "./state-file.js";
import { scenario } from "./test-support/scenario.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");
const WITH_JOURNAL = [
  "budget-global-uniform-replay", "budget-loop-level-replay", "budget-loop-replay", "budget-on-exceeded-fail-replay",
  "budget-on-exceeded-override-replay", "plan-gen-execution",
];

/** Copy a read-only conformance execution into a writable temp dir. */
function copyExec(name: string): string {
  const dst = mkdtempSync(path.join(os.tmpdir(), `state-fold-${name}-`));
  cpSync(path.join(CONF, name), dst, { recursive: true });
  const fix = (p: string): void => {
    chmodSync(p, 0o755);
    for (const e of readdirSync(p, { withFileTypes: true })) {
      const q = path.join(p, e.name);
      if (e.isDirectory()) fix(q);
      else chmodSync(q, 0o644);
    }
  };
  fix(dst);
  return dst;
}

if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(existsSync(CONF)).toBe(false);
  });
}

describe.runIf(existsSync(CONF))("rebuilding the reference runtime's journals (format §4.4)", () => {
  for (const name of WITH_JOURNAL) {
    it(`${name}: the rebuilt state.json equals the saved one byte for byte, carrying run times and executionPlan`, async () => {
      const exec = copyExec(name);
      const saved = readFileSync(layoutOf(exec).state, "utf8");
      const fold = await foldExecution(exec);
      expect(fold.origin).toBe("foreign");
      expect(serializeState(fold.state)).toBe(saved);
      const paths = fold.carried.map((c) => c.path);
      expect(paths).toContain("executionPlan");
      expect(paths).toContain("runs[0].startTime");
      // Codon times are exact from codon.started / state.snapshot: never carried nor approximated.
      expect(paths.filter((p) => p.includes("codons"))).toEqual([]);
      expect(fold.approximated).toEqual([]);
      expect(fold.findings.filter((f) => f.severity === "error")).toEqual([]);
      // The lazily computed resultingState equals the last one the runtime journaled.
      const last = readFileSync(layoutOf(exec).journal, "utf8").trimEnd().split("\n").reverse()
        .map((l) => JSON.parse(l)).find((e) => e.type === "state.transition");
      expect(fold.resultingState).toEqual(last.data.resultingState);
      rmSync(exec, { recursive: true, force: true });
    });

    it(`${name}: without a saved state.json the rebuild differs only in the reported fields`, async () => {
      const exec = copyExec(name);
      const saved = JSON.parse(readFileSync(layoutOf(exec).state, "utf8"));
      rmSync(layoutOf(exec).state);
      rmSync(layoutOf(exec).stateBak, { force: true });
      const fold = await foldExecution(exec);
      expect(fold.carried).toEqual([]);
      const reported = new Set(fold.approximated.map((a) => a.path));
      expect(reported.has("executionPlan")).toBe(true);
      const differing = diffStates(fold.state, saved).map((d) => d.path.replace(/^(executionPlan)\[\d+\].*$/, "$1"));
      expect(differing.length).toBeGreaterThan(0);
      for (const p of differing) expect(reported, `${p} differs but is not reported`).toContain(p);
      for (const a of fold.approximated) {
        if (a.source === "line-timestamp") {
          expect(typeof a.line).toBe("number");
          const ms = Date.parse(String(getPath(fold.state, a.path))) - Date.parse(String(getPath(saved, a.path)));
          expect(ms).toBeGreaterThanOrEqual(0); // the line is stamped after the runtime's clock read
          expect(ms).toBeLessThan(1000);
        }
      }
      rmSync(exec, { recursive: true, force: true });
    });
  }

  it("a state.json from another execution is not carried from, and says so", async () => {
    const exec = copyExec("budget-loop-replay");
    const other = readFileSync(path.join(CONF, "budget-on-exceeded-fail-replay/.hankweave/state.json"), "utf8");
    writeFileSync(layoutOf(exec).state, other);
    rmSync(layoutOf(exec).stateBak, { force: true });
    const fold = await foldExecution(exec);
    expect(fold.carried).toEqual([]);
    expect(fold.findings.map((f) => f.code)).toContain("STATE_OTHER_EXECUTION");
    expect(fold.approximated.map((a) => a.path)).toContain("executionPlan");
    rmSync(exec, { recursive: true, force: true });
  });

  it("a corrupt state.json falls back to state.json.bak for carrying (the runtime's load ladder)", async () => {
    const exec = copyExec("budget-on-exceeded-fail-replay");
    const saved = readFileSync(layoutOf(exec).state, "utf8");
    writeFileSync(layoutOf(exec).state, "{ not json");
    const fold = await foldExecution(exec);
    expect(fold.savedStates.main.kind).toBe("corrupt");
    expect(fold.carried.map((c) => c.path)).toContain("executionPlan");
    // .bak predates RunFailed: run endTime cannot be carried from it and is approximated.
    expect(fold.approximated.map((a) => a.path)).toEqual(["runs[0].endTime"]);
    expect(JSON.parse(serializeState(fold.state)).runs[0].codons).toEqual(JSON.parse(saved).runs[0].codons);
    rmSync(exec, { recursive: true, force: true });
  });

  it("folding plan-gen-execution in chunks equals one pass", async () => {
    const exec = copyExec("plan-gen-execution");
    const reader = await openReader(exec);
    const one = await foldJournal(reader);
    const cuts = [17, 800, 801, 2500, 4000, 6400];
    let out = await foldJournal(reader, { toLine: cuts[0] });
    for (let i = 1; i <= cuts.length; i++) {
      out = await foldJournal(reader, { folder: out.folder, fromLine: cuts[i - 1] + 1, ...(i < cuts.length ? { toLine: cuts[i] } : {}) });
    }
    await reader.close();
    expect(serializeState(out.state)).toBe(serializeState(one.state));
    expect(out.resultingState).toEqual(one.resultingState);
    expect(out.findings).toEqual(one.findings);
    expect(out.transitions).toBe(2636);
    rmSync(exec, { recursive: true, force: true });
  });

  it("the execution without a journal is an error with a stable code, not an empty state", async () => {
    const exec = copyExec("budget-exceeded-replay");
    await expect(foldExecution(exec)).rejects.toMatchObject({ code: "JOURNAL_NOT_FOUND" });
    rmSync(exec, { recursive: true, force: true });
  });
});

function getPath(obj: unknown, p: string): unknown {
  let cur: unknown = obj;
  for (const part of p.match(/[^.[\]]+/g) ?? []) cur = (cur as Record<string, unknown>)?.[part];
  return cur;
}

describe("folding engine-written journals", () => {
  it("one pass equals folding in arbitrary chunks (property, streaming I/O)", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "state-chunks-"));
    const e = await openStateEngine(exec, { durability: "none", saveState: "close" });
    for (const s of scenario(Array.from({ length: 400 }, (_, i) => (i * 104_729) % 9973))) {
      if (s.kind === "transition") await e.transition(s.t);
      else if (s.kind === "plan") await e.setPlan(s.plan);
      else await e.append({ type: s.type, data: s.data });
    }
    await e.close();
    const reader = await openReader(exec);
    const one = await foldJournal(reader);
    const total = (one.lastLine ?? 0) + 1;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.integer({ min: 0, max: total - 1 }), { maxLength: 6 }), async (cutsRaw) => {
        const cuts = [...cutsRaw].sort((a, b) => a - b);
        let out = await foldJournal(reader, cuts.length ? { toLine: cuts[0] } : {});
        for (let i = 1; i <= cuts.length; i++) {
          out = await foldJournal(reader, { folder: out.folder, fromLine: cuts[i - 1] + 1, ...(i < cuts.length ? { toLine: cuts[i] } : {}) });
        }
        expect(serializeState(out.state)).toBe(serializeState(one.state));
        expect(out.resultingState).toEqual(one.resultingState);
        expect(out.transitions).toBe(one.transitions);
      }),
      { numRuns: 30 },
    );
    // Every prefix folds without throwing, and its transition count only grows.
    let prev = -1;
    for (let to = 0; to < total; to += 7) {
      const p = await foldJournal(reader, { toLine: to });
      expect(p.transitions).toBeGreaterThanOrEqual(prev);
      prev = p.transitions;
    }
    await reader.close();
    rmSync(exec, { recursive: true, force: true });
  });
});

describe("bad input never throws: findings with line numbers", () => {
  const line = (i: number, type: string, data: unknown): string =>
    JSON.stringify({ id: `${1_700_000_000_000 + i}-x${i}`, timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(), type, data });
  const st = (i: number, t: { type: string; data: Record<string, unknown> }): string =>
    line(i, "state.transition", { transitionType: t.type, runId: t.data.runId, transition: t, resultingState: {} });

  it("reports unknown runs and codons, out-of-map edges, missing metadata, malformed events and corrupt lines", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "state-bad-"));
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    const lines = [
      line(0, "plan.updated", { plan: [] }),
      st(1, { type: "RunStarted", data: { runId: "r", runFolder: "/f", gitBranch: "b", startingConditions: { type: "fresh" }, serverPid: 1 } }),
      st(2, { type: "CodonStarted", data: { runId: "ghost", codonId: "a" } }),
      st(3, { type: "CostsIncremented", data: { runId: "r", codonId: "nobody", costDelta: 1, tokensDelta: { inputTokens: 1, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 } } }),
      st(4, { type: "CodonStarted", data: { runId: "r", codonId: "a" } }),
      st(5, { type: "CodonTransitioned", data: { runId: "r", codonId: "a", from: "preparing", to: "completed", metadata: {} } }),
      st(6, { type: "CodonTransitioned", data: { runId: "r", codonId: "a", from: "preparing", to: "failed", metadata: {} } }),
      "{this is not json",
      line(8, "state.transition", { transitionType: "X" }),
      "",
      line(10, "plan.updated", { plan: "nope" }),
      st(11, { type: "CodonTransitioned", data: { runId: "r", codonId: "a", from: "preparing", to: "starting", metadata: {} } }),
    ];
    writeFileSync(layoutOf(exec).journal, lines.join("\n") + "\n" + '{"id":"torn');
    const fold = await foldExecution(exec);
    const byLine = new Map(fold.findings.map((f) => [f.line, f.code]));
    expect(byLine.get(2)).toBe("UNKNOWN_RUN");
    expect(byLine.get(3)).toBe("UNKNOWN_CODON");
    expect(byLine.get(5)).toBe("INVALID_TRANSITION");
    expect(byLine.get(6)).toBe("MISSING_METADATA");
    expect(byLine.get(7)).toBe("CORRUPT_LINE");
    expect(byLine.get(8)).toBe("INVALID_EVENT");
    expect(byLine.get(10)).toBe("INVALID_EVENT");
    expect(fold.findings.some((f) => f.code === "TORN_TAIL")).toBe(true);
    expect(fold.state.runs[0].codons).toEqual([{ codonId: "a", startTime: new Date(1_700_000_004_000).toISOString(), status: "starting" }]);
    expect(fold.transitions).toBe(7); // line 8 has no transition object: a finding, not a transition
    expect(fold.lastLine).toBe(11);
    rmSync(exec, { recursive: true, force: true });
  });
});
