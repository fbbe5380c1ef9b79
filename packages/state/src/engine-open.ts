/**
 * What the state engine checks when it opens an execution: does the saved state.json agree with
 * the fold, and which `running` runs belong to a dead server (format §4.1, seeds/000 crash recovery).
 */
import { JournalError, type Finding, type HankweaveState, type StateTransition, type ExecRef, resolveExec } from "@hankweave-journal/core";
import type { WriterOpenReport } from "@hankweave-journal/journal";
import { diffStates } from "./diff-state.js";
import { sameExecution, type FieldSource } from "./foreign-clock.js";
import type { FoldResult, JournalOrigin } from "./state-folder.js";
import { serializeState, type SavedStates } from "./state-file.js";

/** How the saved state.json compared with the fold at open. */
export type SavedStateStatus = "consistent" | "missing" | "corrupt" | "mismatch" | "other-execution";

/** What `openStateEngine` found and did. */
export interface OpenReport {
  origin: JournalOrigin;
  transitions: number;
  lastLine: number | null;
  stateFile: SavedStateStatus;
  /** state.json was missing or corrupt while state.json.bak parsed. */
  bakOnly: boolean;
  /** state.json was rewritten from the journal. */
  rewritten: boolean;
  /** Differing paths when `stateFile` is `mismatch` / `other-execution` (at most 100). */
  differences: string[];
  /** runIds that got a journaled RunCrashed at open. */
  crashedRuns: string[];
  findings: Finding[];
  carried: FieldSource[];
  approximated: FieldSource[];
  /** The writer's open report when it had to repair the journal (torn tail, sidecar), else null. */
  journalRepair: WriterOpenReport | null;
}

const MAX_DIFFERENCES = 100;

/** True when the journal has no state events but a saved state has runs: that file is the only copy of its runs. */
export function savedStateIsOnlyCopy(fold: FoldResult, saved: SavedStates): boolean {
  const savedRuns = (saved.main.kind === "ok" ? saved.main.state.runs.length : 0) + (saved.bak.kind === "ok" ? saved.bak.state.runs.length : 0);
  return fold.origin === "empty" && fold.state.runs.length === 0 && savedRuns > 0;
}

/** The error for replacing a state.json that is the only copy of its runs (nothing is written). */
export function onlyCopyError(exec: ExecRef): JournalError {
  return new JournalError("STATE_MISMATCH", "state.json has runs but the journal has no state transitions: refusing to replace it", { path: resolveExec(exec).exec }, {
    hint: "this directory's state is not journaled; move state.json (and .bak) away to start a journaled execution here",
  });
}

/** Compare the saved states with the fold (pure; `rewrite` says whether state.json differs from the fold). */
export function checkSavedState(exec: ExecRef, fold: FoldResult, saved: SavedStates):
  { rewrite: boolean; report: Omit<OpenReport, "journalRepair"> } {
  void exec;
  const expected = serializeState(fold.state);
  const base = {
    origin: fold.origin, transitions: fold.transitions, lastLine: fold.lastLine, bakOnly: false, rewritten: false,
    differences: [] as string[], crashedRuns: [] as string[], findings: fold.findings, carried: fold.carried, approximated: fold.approximated,
  };
  const m = saved.main;
  if (m.kind === "ok" && m.text === expected) return { rewrite: false, report: { ...base, stateFile: "consistent" } };
  if (m.kind !== "ok") {
    return {
      rewrite: true,
      report: { ...base, stateFile: m.kind === "missing" ? "missing" : "corrupt", bakOnly: saved.bak.kind === "ok" },
    };
  }
  const differences = diffStates(fold.state, m.state, MAX_DIFFERENCES).map((d) => (d.kind === "value" ? d.path : `${d.path} (${d.kind})`));
  if (differences.length === 0) differences.push("(formatting)");
  const stateFile: SavedStateStatus = sameExecution(fold.state, m.state) ? "mismatch" : "other-execution";
  return { rewrite: true, report: { ...base, stateFile, differences } };
}

/** True when no process has `pid` (kill(pid, 0) fails with ESRCH). EPERM means alive. */
export function isPidDead(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
}

const TERMINAL = new Set(["completed", "failed", "skipped"]);

/**
 * RunCrashed transitions for every `running` run whose `serverPid` is dead (never our own pid).
 * `lastCodonStatus` = the status of the first non-terminal record, else of the last record, else "preparing".
 */
export function detectCrashedRuns(state: HankweaveState, nowMs: number, dead: (pid: number) => boolean = isPidDead): StateTransition[] {
  const out: StateTransition[] = [];
  for (const run of state.runs) {
    if (run.status !== "running" || typeof run.serverPid !== "number" || run.serverPid === process.pid) continue;
    if (!dead(run.serverPid)) continue;
    const open = run.codons.find((c) => !TERMINAL.has(c.status));
    const last = open ?? run.codons[run.codons.length - 1];
    out.push({
      type: "RunCrashed",
      data: { runId: run.runId, detectedAt: new Date(nowMs).toISOString(), lastCodonStatus: last?.status ?? "preparing" },
    });
  }
  return out;
}
