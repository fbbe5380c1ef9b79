/**
 * The simulation planner: a pure generator of the steps (events, state transitions, plan updates,
 * snapshots) a reference-runtime execution would journal, in the runtime's order. No I/O: a
 * consumer (the writer, or a test) applies the steps and reports progress through `measure`.
 */
import { bulkCodons, coverageRuns, planEntry, type CodonSpec } from "./hank.js";
import { runCodon } from "./codon-attempt.js";
import { BYTES_PER_EVENT_ESTIMATE, Sim, iso, type PlanOptions, type SimStep } from "./sim.js";

export type { SimStep, Measure, SizeTarget, PlanOptions } from "./sim.js";

/** Planned codon count for a target: grows with √size so codons stay realistic (tens to thousands of messages). */
export function plannedCodonCount(targetBytes: number): number {
  return Math.max(16, Math.round(20 * Math.sqrt(targetBytes / (4 * 1024 * 1024))));
}

/**
 * Plan a whole execution: runs (fresh, crashed, continued, failed, retried), codons walking the
 * state machine, loops, sentinels, budgets, costs, file bodies. Deterministic for `seed` given the
 * same `measure` answers. Ends when the size target is reached (within a few KB).
 *
 * @example for (const step of planExecution({ seed: 1, target: { bytes: 1e6 }, schema: 1, measure })) apply(step);
 */
export function* planExecution(o: PlanOptions): Generator<SimStep> {
  const sim = new Sim(o);
  const targetBytes = "bytes" in o.target ? o.target.bytes : o.target.events * BYTES_PER_EVENT_ESTIMATE;
  const runs = coverageRuns();
  const coverageCount = runs.reduce((n, run) => n + run.length, 0);
  let bulkCount = Math.max(2, plannedCodonCount(targetBytes) - coverageCount);
  bulkCount += bulkCount % 2; // whole loop iterations
  let bulk = bulkCodons(bulkCount, 0, bulkCount / 2);
  const finalCodon: CodonSpec = { ...bulk[0], codonId: "final-step-compress", baseId: "final-step-compress", name: "Final: compress", sentinels: false, rigOps: [], fate: "complete" };
  delete finalCodon.loopContext;
  delete finalCodon.endsIteration;
  delete finalCodon.finalIteration;
  const planOf = (): Record<string, unknown>[] => {
    const seen = new Set<string>();
    const out: Record<string, unknown>[] = [];
    for (const s of [...runs.flat(), ...bulk, finalCodon]) {
      if (seen.has(s.codonId)) continue;
      seen.add(s.codonId);
      out.push(planEntry(s));
    }
    return out;
  };
  let codonsLeft = coverageCount + bulk.length + 1;

  // ---- run 1: fresh
  let runId = `${sim.tick(10, 50)}-${sim.r.base36(5)}`;
  yield sim.transition("RunStarted", runStarted(sim, runId, { type: "fresh" }));
  yield sim.transition("InitialCheckpointSet", { sha: sim.r.hex(40) });
  yield { kind: "plan", at: sim.tick(0, 3), plan: planOf() };
  let lastCompleted: string | null = null;
  let lastSha = sim.r.hex(40);

  for (let runIndex = 0; runIndex < runs.length; runIndex++) {
    const specs = runIndex === runs.length - 1 ? [...runs[runIndex], ...bulk, finalCodon] : runs[runIndex];
    let ended: "crash" | "fail" | "done" = "done";
    for (let i = 0; i < specs.length; i++) {
      let spec = specs[i];
      const isBulk = runIndex === runs.length - 1 && i >= runs[runIndex].length && spec !== finalCodon;
      if (isBulk && sim.remaining() <= 0) {
        // Target reached: the loop stops early; go straight to the final codon.
        i = specs.length - 2;
        continue;
      }
      if (spec === finalCodon && sim.remaining() > targetBytes * 0.02 * sim.unitsPerByte) {
        // Still far below the target: the loop runs two more iterations (the plan grows).
        const last = bulk[bulk.length - 1].loopContext?.iteration ?? 0;
        const more = bulkCodons(2, last + 1, last + 2);
        bulk = [...bulk, ...more];
        specs.splice(i, 0, ...more);
        codonsLeft += more.length;
        spec = specs[i];
        yield { kind: "plan", at: sim.tick(0, 3), plan: planOf() };
      }
      const budget = Math.max(0, sim.remaining()) / Math.max(1, codonsLeft);
      sim.codonBudgetBytes = budget / sim.unitsPerByte;
      codonsLeft -= 1;
      const outcome = yield* runCodon(sim, spec, runId, budget);
      if (outcome.sha) lastSha = outcome.sha;
      if (outcome.result === "completed") lastCompleted = spec.codonId;
      if (spec.fate === "crash") {
        ended = "crash";
        break;
      }
      if (outcome.result === "failed" && spec.fate === "budget-fail") {
        ended = "fail";
        break;
      }
    }
    if (ended === "crash") {
      // The server died. The next server detects the stale run, then continues.
      sim.tick(20_000, 5_000);
      yield sim.transition("RunCrashed", { runId, detectedAt: iso(sim.now), lastCodonStatus: "running" });
      const prev = runId;
      runId = `${sim.tick(5, 20)}-${sim.r.base36(5)}`;
      yield sim.transition("RunStarted", runStarted(sim, runId, {
        type: "continuation", source: { runId: prev, afterCodon: lastCompleted, checkpointSha: lastSha }, reason: "continue",
      }));
      continue;
    }
    if (ended === "fail") {
      yield sim.transition("RunFailed", { runId });
      yield sim.event("info", { message: "Shutting down: waiting for agent process to exit. Send server.force_shutdown to force quit." });
      sim.tick(60_000, 30_000);
      const prev = runId;
      runId = `${sim.tick(5, 20)}-${sim.r.base36(5)}`;
      yield sim.transition("RunStarted", runStarted(sim, runId, {
        type: "continuation", source: { runId: prev, afterCodon: lastCompleted, checkpointSha: lastSha }, reason: "retry",
      }));
      continue;
    }
  }
  yield sim.event("info", { message: "All codons completed successfully. Server shutting down." });
  yield sim.transition("RunCompleted", { runId });
}

function runStarted(sim: Sim, runId: string, startingConditions: Record<string, unknown>): Record<string, unknown> {
  return {
    runId,
    runFolder: `${sim.root}/.hankweave/runs/${runId}`,
    gitBranch: `run-${runId}`,
    startingConditions,
    serverPid: sim.r.int(1000, 99999),
  };
}
