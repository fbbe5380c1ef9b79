import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { evolveReport, initialState, nextResultingState } from "./reducer.js";
import type { HankweaveState, ResultingState, StateTransition } from "./state-types.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");

interface Step { line: number; at: string; transition: StateTransition; resultingState: ResultingState }

/** The state.transition events of a journal, in line order. */
function transitionsOf(journal: string): Step[] {
  const steps: Step[] = [];
  readFileSync(journal, "utf8").split("\n").forEach((text, line) => {
    if (text === "") return;
    const ev = JSON.parse(text) as { type: string; timestamp: string; data: { transition: StateTransition; resultingState: ResultingState } };
    if (ev.type !== "state.transition") return;
    steps.push({ line, at: ev.timestamp, transition: ev.data.transition, resultingState: ev.data.resultingState });
  });
  return steps;
}

/** `{runs, currentRunId}` with run and codon startTime/endTime removed, serialised (key order kept). */
function withoutClock(state: HankweaveState): string {
  const runs = state.runs.map((run) => {
    const { startTime: _s, endTime: _e, ...rest } = run;
    return {
      ...rest,
      codons: run.codons.map((c) => {
        const { startTime: _cs, endTime: _ce, ...crest } = c as unknown as Record<string, unknown>;
        return crest;
      }),
    };
  });
  return JSON.stringify({ runs, currentRunId: state.currentRunId }, null, 2);
}

if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error(`missing ${CONF}`);
    console.warn(`skipped: ${CONF} absent`);
    expect(existsSync(CONF)).toBe(false);
  });
}

describe.runIf(existsSync(CONF))("folding the conformance journals", () => {
  const executions = existsSync(CONF)
    ? readdirSync(CONF).filter((d) => existsSync(path.join(CONF, d, ".hankweave/events/events.jsonl"))).sort()
    : [];

  it("finds the six journals with 2,969 transitions in total (333 in the five small ones)", () => {
    const counts = executions.map((d) => transitionsOf(path.join(CONF, d, ".hankweave/events/events.jsonl")).length);
    expect(executions.length).toBe(6);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2969);
    const small = executions.filter((d) => d !== "plan-gen-execution");
    expect(small.map((d) => transitionsOf(path.join(CONF, d, ".hankweave/events/events.jsonl")).length).reduce((a, b) => a + b, 0)).toBe(333);
  });

  for (const exec of executions) {
    describe(exec, () => {
      const dir = path.join(CONF, exec, ".hankweave");
      const steps = transitionsOf(path.join(dir, "events/events.jsonl"));
      const folded = (() => {
        let state = initialState();
        let previous: ResultingState | null = null;
        const mismatches: { line: number; expected: ResultingState; actual: ResultingState }[] = [];
        const errors: unknown[] = [];
        const warnings: string[] = [];
        for (const s of steps) {
          const r = evolveReport(state, s.transition, s.at);
          if (r.finding?.severity === "error") errors.push({ line: s.line, finding: r.finding });
          if (r.finding?.severity === "warning") warnings.push(`${r.finding.code} ${String(r.finding.details?.codonId)}`);
          state = r.state;
          const rs = nextResultingState(previous, state, s.transition);
          if (JSON.stringify(rs) !== JSON.stringify(s.resultingState) || !Object.is(rs.totalCost, s.resultingState.totalCost)) {
            mismatches.push({ line: s.line, expected: s.resultingState, actual: rs });
          }
          previous = rs;
        }
        return { state, mismatches, errors, warnings };
      })();

      it("recomputes every resultingState bit for bit", () => {
        expect(steps.length).toBeGreaterThan(0);
        expect(folded.mismatches).toEqual([]);
      });

      it("applies every transition without an error finding", () => {
        expect(folded.errors).toEqual([]);
      });

      it("warns only where the runtime itself targeted a codon id that has no record", () => {
        // plan-gen's runtime sent three SentinelStatesUpdated for the loop's un-suffixed codon id
        // (no record has it): the runtime ignored them, we ignore them too and say so.
        const expected = exec === "plan-gen-execution" ? Array(3).fill("UNKNOWN_CODON implement-loop-step-1-implement") : [];
        expect(folded.warnings).toEqual(expected);
      });

      it("folds all but the final transition to the saved state.json.bak (clock fields aside)", () => {
        const bak = path.join(dir, "state.json.bak");
        expect(existsSync(bak)).toBe(true);
        expect(["RunCompleted", "RunFailed"]).toContain(steps[steps.length - 1].transition.type);
        let state = initialState();
        for (const s of steps.slice(0, -1)) state = evolveReport(state, s.transition, s.at).state;
        const saved = JSON.parse(readFileSync(bak, "utf8")) as HankweaveState;
        expect(withoutClock(state)).toBe(withoutClock(saved));
      });

      it("folds to the saved state.json's runs and currentRunId (clock fields aside, key order included)", () => {
        const saved = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as HankweaveState;
        expect(withoutClock(folded.state)).toBe(withoutClock(saved));
      });
    });
  }
});
