/**
 * Clock fields of foreign journals (format §4.4). The reference runtime stamps run and codon times
 * with its wall clock, a few ms before the journal line. This module turns the raw fold (line
 * timestamps) into the best state the journal supports: exact codon times from `codon.started` /
 * `state.snapshot`, then fields carried from a saved state.json (matched by runId, and by record
 * index + codonId), then line timestamps — and lists every carried or approximated field.
 */
import type { Finding, HankweaveState, Run } from "@hankweave-journal/core";

/** A field whose value was not derived exactly from the journal. */
export interface FieldSource {
  /** Path in the state, e.g. `runs[0].codons[3].endTime` or `executionPlan`. */
  path: string;
  /** `state.json` (carried), `line-timestamp` (approximated from `line`), `initial` (not journaled; left at its initial value). */
  source: "state.json" | "line-timestamp" | "initial";
  /** The journal line whose timestamp the approximation came from. */
  line?: number;
}

/** What the folder learned about clock fields while folding a foreign journal. */
export interface ClockFacts {
  /** runId → record index → exact startTime. */
  exactStart: Map<string, Map<number, string>>;
  /** runId → record index → exact endTime. */
  exactEnd: Map<string, Map<number, string>>;
  /** `runId\0(index|run)\0(start|end)` → line whose timestamp stamped the field. */
  approx: Map<string, number>;
  /** Line of the latest plan.updated, null if none. */
  planLine: number | null;
}

export interface PatchedState {
  state: HankweaveState;
  carried: FieldSource[];
  approximated: FieldSource[];
  findings: Finding[];
}

/** True when `saved` describes the same execution: it shares a runId with `state`, or both have no runs. */
export function sameExecution(state: HankweaveState, saved: HankweaveState): boolean {
  if (saved.runs.length === 0 || state.runs.length === 0) return saved.runs.length === state.runs.length || saved.runs.length === 0;
  const ids = new Set(state.runs.map((r) => r.runId));
  return saved.runs.some((r) => ids.has(r.runId));
}

/** Apply exact, carried and approximated clock fields to the raw fold. Pure; returns new objects. */
export function patchForeignClock(raw: HankweaveState, facts: ClockFacts, saved: HankweaveState | null): PatchedState {
  const carried: FieldSource[] = [];
  const approximated: FieldSource[] = [];
  const findings: Finding[] = [];
  let source = saved;
  if (source !== null && !sameExecution(raw, source)) {
    findings.push({
      code: "STATE_OTHER_EXECUTION", severity: "warning",
      message: "the saved state.json shares no runId with the journal: nothing carried from it",
    });
    source = null;
  }
  const savedRuns = new Map<string, Run>();
  for (const r of source?.runs ?? []) savedRuns.set(r.runId, r);

  const runs = raw.runs.map((run, ri) => {
    const sr = savedRuns.get(run.runId);
    const out: Run = { ...run };
    const pick = (field: "startTime" | "endTime", k: string, savedValue: unknown, path: string): void => {
      const line = facts.approx.get(k);
      if (line === undefined) return; // exact by data (RunCrashed detectedAt)
      if (typeof savedValue === "string" && savedValue) {
        (out as unknown as Record<string, unknown>)[field] = savedValue;
        carried.push({ path, source: "state.json" });
      } else {
        approximated.push({ path, source: "line-timestamp", line });
      }
    };
    pick("startTime", `${run.runId}\u0000run\u0000start`, sr?.startTime, `runs[${ri}].startTime`);
    if (run.endTime !== undefined) pick("endTime", `${run.runId}\u0000run\u0000end`, sr?.endTime, `runs[${ri}].endTime`);
    const starts = facts.exactStart.get(run.runId);
    const ends = facts.exactEnd.get(run.runId);
    out.codons = run.codons.map((c, ci) => {
      const sc = sr?.codons[ci]?.codonId === c.codonId ? (sr.codons[ci] as unknown as Record<string, unknown>) : undefined;
      const rec = { ...c } as Record<string, unknown>;
      const fix = (field: "startTime" | "endTime", exact: string | undefined, which: "start" | "end"): void => {
        if (exact !== undefined) {
          rec[field] = exact;
          return;
        }
        const line = facts.approx.get(`${run.runId}\u0000${ci}\u0000${which}`);
        if (line === undefined) return;
        const path = `runs[${ri}].codons[${ci}].${field}`;
        const sv = sc?.[field];
        if (typeof sv === "string" && sv) {
          rec[field] = sv;
          carried.push({ path, source: "state.json" });
        } else {
          approximated.push({ path, source: "line-timestamp", line });
        }
      };
      fix("startTime", starts?.get(ci), "start");
      if (rec.endTime !== undefined) fix("endTime", ends?.get(ci), "end");
      return rec as unknown as typeof c;
    });
    return out;
  });

  const state: HankweaveState = { ...raw, runs };
  if (facts.planLine === null) {
    if (source !== null) {
      state.executionPlan = source.executionPlan;
      carried.push({ path: "executionPlan", source: "state.json" });
    } else {
      approximated.push({ path: "executionPlan", source: "initial" });
    }
  }
  return { state, carried, approximated, findings };
}
