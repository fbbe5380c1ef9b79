/**
 * The simulation planner: a pure generator of the steps (events, state transitions, plan updates,
 * snapshots) a reference-runtime execution would journal, in the runtime's order. No I/O: a
 * consumer (the writer, or a test) applies the steps and reports progress through `measure`.
 */
import type { StateTransition, TokenUsage } from "@hankweave-journal/core";
import { buildCorpus, type Corpus } from "./corpus.js";
import { bulkCodons, coverageRuns, planEntry, type CodonSpec } from "./hank.js";
import {
  BASH_RESULT_LIMIT_CHARS, READ_RESULT_LIMIT_CHARS, drawBlock, drawUsage, fileTree, fileUpdated, prose, sentinelReport,
  toolResult, toolUseId,
} from "./payloads.js";
import { createRng, type Rng } from "./prng.js";
import { RepoModel } from "./repo-model.js";

/** One thing the execution journals. `at` is the simulated wall clock (ms since epoch). */
export type SimStep =
  | { kind: "event"; at: number; type: string; data: Record<string, unknown> }
  | { kind: "transition"; at: number; transition: StateTransition }
  | { kind: "plan"; at: number; plan: Record<string, unknown>[] }
  /** A `state.snapshot`: the consumer fills `completedCodons` from the state (the runtime's records). */
  | { kind: "snapshot"; at: number; codonStartAt: number; totalCost: number; recentFileAccess: { path: string; content: string; timestamp: string } | null };

/** Progress the consumer reports back: what has been written so far. */
export interface Measure {
  bytes(): number;
  events(): number;
}

/** Size target: bytes of journal, or a number of events. */
export type SizeTarget = { bytes: number } | { events: number };

export interface PlanOptions {
  seed: number;
  target: SizeTarget;
  /** Event schema version: 1 = inline `file.updated.content`, 2 = sha256/bytes/source. */
  schema: 1 | 2;
  measure: Measure;
  /** Simulated clock start (ms); default derived from the seed (March 2026). */
  startMs?: number;
  /** Execution directory name used inside paths (cosmetic). */
  execName?: string;
}

/** Average bytes per event used to turn an event target into a byte-like budget (measured). */
const BYTES_PER_EVENT_ESTIMATE = 900;
/** Bytes kept for the end of the execution (last codon completion, snapshot, RunCompleted). */
const TAIL_RESERVE_BYTES = 6_000;

interface Codon {
  spec: CodonSpec;
  runId: string;
  startAt: number;
  cost: number;
  tokens: TokenUsage;
  messages: number;
  extensions: number;
  sentinel: { loadedAt: string; calls: number; cost: number; lastAt: string | null; triggers: number } | null;
}

const zeroTokens = (): TokenUsage => ({ inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 });
const iso = (ms: number): string => new Date(ms).toISOString();

/** Planned codon count for a target: grows with √size so codons stay realistic (tens to thousands of messages). */
export function plannedCodonCount(targetBytes: number): number {
  return Math.max(16, Math.round(20 * Math.sqrt(targetBytes / (4 * 1024 * 1024))));
}

class Sim {
  readonly r: Rng;
  readonly corpus: Corpus;
  readonly repo: RepoModel;
  now: number;
  private readonly targetUnits: number;
  readonly unitsPerByte: number;
  readonly root: string;
  totalCost = 0;
  touched: string[] = [];
  lastBody: { path: string; content: string; at: number } | null = null;

  constructor(readonly o: PlanOptions) {
    this.r = createRng(o.seed);
    const targetBytes = "bytes" in o.target ? o.target.bytes : o.target.events * BYTES_PER_EVENT_ESTIMATE;
    const poolChars = Math.min(4 << 20, Math.max(96 << 10, Math.floor(targetBytes / 24)));
    this.corpus = buildCorpus(this.r.fork(), poolChars);
    this.repo = new RepoModel(this.corpus, this.r.fork());
    this.now = o.startMs ?? 1772712164465 + (o.seed % 1000) * 86_400_000;
    this.targetUnits = "bytes" in o.target ? o.target.bytes : o.target.events;
    this.unitsPerByte = "bytes" in o.target ? 1 : 1 / BYTES_PER_EVENT_ESTIMATE;
    this.root = `/home/agent/executions/${o.execName ?? "generated"}`;
  }

  used(): number {
    return "bytes" in this.o.target ? this.o.measure.bytes() : this.o.measure.events();
  }
  remaining(): number {
    return this.targetUnits - this.used() - TAIL_RESERVE_BYTES * this.unitsPerByte;
  }
  /** Cap for one body: a quarter of what is left (so small targets are met), never below 256 chars. */
  bodyCap(): number {
    const left = this.remaining() / this.unitsPerByte;
    return Math.max(256, Math.floor(Math.min(400_000, this.codonBudgetBytes / 2, left / 4)));
  }
  /** The running codon's byte budget (bodies are capped to half of it). */
  codonBudgetBytes = Infinity;
  tick(min: number, median: number): number {
    this.now += min + this.r.logNormal(median, 1, 0, median * 40);
    return this.now;
  }
  event(type: string, data: Record<string, unknown>, gapMs = 5): SimStep {
    return { kind: "event", at: this.tick(0, gapMs), type, data };
  }
  transition(type: string, data: Record<string, unknown>, gapMs = 2): SimStep {
    return { kind: "transition", at: this.tick(0, gapMs), transition: { type, data } as unknown as StateTransition };
  }
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

interface CodonOutcome {
  result: "completed" | "failed" | "skipped" | "crashed";
  sha: string | null;
}

function* runCodon(sim: Sim, spec: CodonSpec, runId: string, budget: number): Generator<SimStep, CodonOutcome> {
  if (spec.fate === "retry-then-complete") {
    const first = yield* attempt(sim, { ...spec, fate: "retry-then-complete" }, runId, budget * 0.4, true);
    yield sim.event("info", { message: `Retrying codon ${spec.codonId} (attempt 2/3)` }, 500);
    const second = yield* attempt(sim, { ...spec, fate: "complete" }, runId, budget * 0.6, false);
    return second.result === "completed" ? second : first;
  }
  return yield* attempt(sim, spec, runId, budget, false);
}

const ids = (runId: string, codonId: string) => ({ runId, codonId });

function* attempt(sim: Sim, spec: CodonSpec, runId: string, budget: number, failThisAttempt: boolean): Generator<SimStep, CodonOutcome> {
  const r = sim.r;
  const { codonId } = spec;
  const startUsed = sim.used();
  const started: Record<string, unknown> = { runId, codonId };
  if (spec.loopContext) started.loopContext = spec.loopContext;
  yield sim.event("info", { message: `Starting codon ${codonId}` }, 80);
  const startStep = sim.transition("CodonStarted", started);
  yield startStep;
  const c: Codon = { spec, runId, startAt: startStep.at, cost: 0, tokens: zeroTokens(), messages: 0, extensions: 0, sentinel: null };

  if (spec.fate === "skip-preparing") {
    yield sim.event("info", { message: `Skipping codon ${codonId} (skipped by user)` }, 400);
    yield sim.transition("CodonTransitioned", { ...ids(runId, codonId), from: "preparing", to: "skipped", metadata: { skippedDuring: "preparing" } });
    yield sim.event("codon.completed", { codonId, success: false, cost: 0, duration: sim.now - c.startAt, exitStatus: { type: "skipped" } });
    return { result: "skipped", sha: null };
  }

  // ---- rig setup (preparing)
  if (spec.rigOps.length > 0) {
    yield sim.event("info", { message: `Rig setup started for codon '${spec.name}': ${spec.rigOps.length} operations` });
    for (let k = 0; k < spec.rigOps.length; k++) {
      yield sim.event("info", { message: `Rig operation ${k + 1}/${spec.rigOps.length}: command '${spec.rigOps[k]}'` }, 300);
      if (r.chance(0.3)) {
        yield sim.event("rig.output", { codonId, commandIndex: k, stream: "stdout", output: sim.corpus.body("listing", r.int(80, 1500), r) }, 200);
      }
      if (spec.rigOps[k].startsWith("mv") || spec.rigOps[k].startsWith("git clone")) {
        yield sim.event("rig.setup.failed", { codonId, failureType: "command_failed", exitCode: 128, commandIndex: k, ignored: true }, 150);
        yield sim.event("error", {
          message: "Rig setup operation failed but continuing (--ignore-rig-failures): Command failed with exit code 128",
          context: `Codon ${codonId} - command operation (item ${k + 1})`, codon: codonId, fatal: false, severity: "operation",
        });
      }
    }
    yield sim.event("rig.setup.completed", { codonId, rigType: "commands", commandCount: spec.rigOps.length, durationMs: r.int(200, 4000), createdCheckpoint: true }, 800);
  }
  if (spec.sentinels) {
    yield sim.event("sentinel.loaded", {
      sentinelId: "implementation-observer", codonId, model: "anthropic/claude-haiku-4-5", triggerType: "event",
      executionStrategy: "debounce", conversational: true, source: "file", sourcePath: "/home/agent/hanks/plan-gen/sentinels/implementation-observer.json",
    });
  }
  yield sim.transition("CodonTransitioned", { ...ids(runId, codonId), from: "preparing", to: "starting", metadata: {} });
  if (spec.sentinels) {
    c.sentinel = { loadedAt: iso(sim.now), calls: 0, cost: 0, lastAt: null, triggers: 0 };
    yield sentinelStates(sim, c);
  }
  if (spec.rigOps.length > 0) {
    const f = sim.repo.pick(sim.bodyCap());
    yield* emitFile(sim, f.path, f.content, "created");
    yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "rig-setup", sha: r.hex(40), branch: `run-${runId}` });
    yield sim.event("filetree.updated", fileTree(sim.touched, iso(sim.now)));
  }
  const pid = r.int(1000, 999999);
  yield sim.transition("CodonTransitioned", {
    ...ids(runId, codonId), from: "starting", to: "initializing",
    metadata: { claudePid: pid, claudeLogPath: `.hankweave/runs/${runId}/${codonId.replace("#", "-")}-claude.log` },
  }, 200);

  if (spec.fate === "complete-no-session") {
    yield sim.event("info", { message: `Codon ${codonId} exited before a session was established` }, 1500);
    const sha = r.hex(40);
    yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "completed", sha, branch: `run-${runId}` });
    yield sim.transition("CodonTransitioned", {
      ...ids(runId, codonId), from: "initializing", to: "completed",
      metadata: { exitCode: 0, resultMessageReceived: false, checkpointSha: sha, contextExceeded: false, extensionCount: 0 },
    });
    yield sim.event("codon.completed", { codonId, success: true, cost: 0, duration: sim.now - c.startAt, exitStatus: { type: "success" } });
    yield snapshot(sim, c, false);
    return { result: "completed", sha };
  }

  const sessionId = r.uuid();
  yield sim.event("info", { message: `Started codon ${codonId} with session ID: ${sessionId}` }, 1500);
  yield sim.transition("CodonTransitioned", { ...ids(runId, codonId), from: "initializing", to: "running", metadata: { claudeSessionId: sessionId } });
  yield sim.event("codon.started", { codonId, codonName: spec.name, codonDescription: spec.description, sessionId, startTime: iso(c.startAt) });

  // ---- the agent works
  const stopAt = spec.fate === "crash" ? budget * 0.5 : failThisAttempt ? budget : budget;
  let extended = false;
  let costsUpdated = false;
  const minMessages = 2;
  while (c.messages < minMessages || sim.used() - startUsed < stopAt) {
    yield* message(sim, c);
    if (c.sentinel && c.messages % 6 === 0) yield* sentinelTrigger(sim, c);
    if (spec.fate === "extend-complete" && !extended && c.messages >= 2) {
      extended = true;
      c.extensions += 1;
      yield sim.event("info", { message: `Codon ${codonId} reached its turn limit; extending (1/100)` }, 200);
      yield sim.event("codon.extended", { codonId, extensionCount: c.extensions, maxExtensions: 100, reason: "max-turns" });
      yield sim.transition("ExtensionCountUpdated", { ...ids(runId, codonId), extensionCount: c.extensions });
    }
    if (spec.fate === "extend-complete" && !costsUpdated && c.messages >= 3) {
      costsUpdated = true;
      yield sim.transition("CostsUpdated", { ...ids(runId, codonId), cost: c.cost, tokens: { ...c.tokens } });
    }
    if (c.messages > 200_000) break;
  }

  if (spec.fate === "crash") return { result: "crashed", sha: null }; // the journal just stops

  if (failThisAttempt) {
    yield sim.event("error", { message: "Agent process exited with code 1", context: `Codon ${codonId}`, codon: codonId, fatal: false, severity: "codon" }, 300);
    const sha = r.hex(40);
    const failureReason = { type: "process_exit", retriable: true, message: "Agent process exited with code 1" };
    yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "error", sha, branch: `run-${runId}` });
    yield sim.transition("CodonTransitioned", {
      ...ids(runId, codonId), from: "running", to: "failed",
      metadata: { exitCode: 1, failureReason, failedDuring: "running", checkpointSha: sha },
    });
    yield sim.event("codon.completed", { codonId, success: false, cost: c.cost, duration: sim.now - c.startAt, exitStatus: { type: "error", code: 1 }, failureReason });
    yield snapshot(sim, c, false);
    sim.totalCost += c.cost;
    return { result: "failed", sha };
  }

  if (spec.fate === "skip-running") {
    const sha = r.hex(40);
    yield sim.event("info", { message: `Skipping codon ${codonId} (skipped by user)` }, 300);
    yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "skipped", sha, branch: `run-${runId}` });
    yield sim.transition("CodonTransitioned", { ...ids(runId, codonId), from: "running", to: "skipped", metadata: { skippedDuring: "running", checkpointSha: sha } });
    yield sim.event("codon.completed", { codonId, success: false, cost: c.cost, duration: sim.now - c.startAt, exitStatus: { type: "skipped" } });
    yield snapshot(sim, c, false);
    return { result: "skipped", sha };
  }

  if (spec.fate === "budget-complete" || spec.fate === "budget-fail") {
    const limit = Math.floor(c.cost * 80) / 100;
    const budgetExceeded = { currency: "cost", limit, used: c.cost };
    const sha = r.hex(40);
    const msg = `Cost $${c.cost.toFixed(4)} exceeded limit $${limit.toFixed(4)}`;
    if (spec.fate === "budget-complete") {
      yield sim.event("info", { message: `Codon completed (budget limit reached: ${msg})` }, 300);
      yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "completed", sha, branch: `run-${runId}` });
      yield sim.transition("CodonTransitioned", {
        ...ids(runId, codonId), from: "running", to: "completed",
        metadata: { exitCode: 0, resultMessageReceived: false, checkpointSha: sha, contextExceeded: false, extensionCount: 0, budgetExceeded },
      });
      yield sim.event("codon.completed", { codonId, success: true, cost: c.cost, duration: sim.now - c.startAt, exitStatus: { type: "success" }, budgetExceeded });
      yield snapshot(sim, c, true);
      sim.totalCost += c.cost;
      return { result: "completed", sha };
    }
    const failureReason = { type: "unknown", retriable: false, message: `Budget exceeded: ${msg}` };
    yield sim.event("info", { message: `Codon failed (budget limit reached: ${msg})` }, 300);
    yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "error", sha, branch: `run-${runId}` });
    yield sim.transition("CodonTransitioned", {
      ...ids(runId, codonId), from: "running", to: "failed",
      metadata: {
        exitCode: 0, resultMessageReceived: false, checkpointSha: sha, contextExceeded: false, extensionCount: 0, budgetExceeded,
        failedDuring: "running", failureReason,
      },
    });
    yield sim.event("codon.completed", { codonId, success: false, cost: c.cost, duration: sim.now - c.startAt, exitStatus: { type: "success" }, failureReason, budgetExceeded });
    yield snapshot(sim, c, false);
    sim.totalCost += c.cost;
    return { result: "failed", sha };
  }

  // ---- normal completion (optionally through completing-sentinels)
  yield sim.transition("CodonFinalCostSet", { ...ids(runId, codonId), finalCost: c.cost, finalTokens: { ...c.tokens } }, 1500);
  let from = "running";
  if (c.sentinel) {
    yield sim.event("info", { message: "Completing work for 1 sentinel(s)..." });
    yield sim.transition("CodonTransitioned", {
      ...ids(runId, codonId), from: "running", to: "completing-sentinels", metadata: { sentinelCount: 1, sentinelIds: ["implementation-observer"] },
    });
    from = "completing-sentinels";
    yield* sentinelTrigger(sim, c);
    yield sim.event("info", { message: "Sentinel work completed (1 sentinel(s))" }, 300);
    yield sentinelStates(sim, c);
  }
  const sha = r.hex(40);
  yield sim.transition("CheckpointCreated", { ...ids(runId, codonId), checkpointType: "completed", sha, branch: `run-${runId}` }, 800);
  yield sim.transition("CodonTransitioned", {
    ...ids(runId, codonId), from, to: "completed",
    metadata: { exitCode: 0, resultMessageReceived: true, checkpointSha: sha, contextExceeded: false, extensionCount: c.extensions },
  });
  yield sim.event("codon.completed", { codonId, success: true, cost: c.cost, duration: sim.now - c.startAt, exitStatus: { type: "success" } });
  if (c.sentinel) {
    yield sim.event("sentinel.unloaded", { sentinelId: "implementation-observer", codonId, reason: "codon-complete", finalCost: c.sentinel.cost, llmCallCount: c.sentinel.calls });
  }
  yield snapshot(sim, c, true);
  sim.totalCost += c.cost;
  if (spec.endsIteration && spec.loopContext) {
    yield sim.event("loop.iteration.completed", {
      loopId: spec.loopContext.loopId, iteration: spec.loopContext.iteration, durationMs: sim.now - c.startAt,
      costUsd: c.cost, tokensUsed: c.tokens.inputTokens + c.tokens.outputTokens, isFinal: spec.finalIteration === true,
    });
  }
  return { result: "completed", sha };
}

function sentinelStates(sim: Sim, c: Codon): SimStep {
  const s = c.sentinel!;
  const state: Record<string, unknown> = {
    id: "implementation-observer", model: "anthropic/claude-haiku-4-5", loadedAt: s.loadedAt, llmCallCount: s.calls, failedLLMCalls: 0,
  };
  if (s.lastAt) state.lastLlmCallAt = s.lastAt;
  state.totalTriggers = s.triggers;
  state.totalCost = s.cost;
  state.status = "active";
  return sim.transition("SentinelStatesUpdated", { runId: c.runId, codonId: c.spec.codonId, sentinelStates: [state], totalCost: s.cost });
}

function* sentinelTrigger(sim: Sim, c: Codon): Generator<SimStep> {
  const s = c.sentinel!;
  const r = sim.r;
  s.triggers += 1;
  s.calls += 1;
  yield sim.event("sentinel.triggered", { sentinelId: "implementation-observer", codonId: c.spec.codonId, triggerNumber: s.triggers, strategy: "debounce", eventCount: r.int(1, 30), queueSize: 0 }, 400);
  if (r.chance(0.04)) {
    yield sim.event("sentinel.error", { sentinelId: "implementation-observer", codonId: c.spec.codonId, triggerNumber: s.triggers, error: "LLM call failed: 529 overloaded_error", retriable: true }, 2000);
    return;
  }
  const cost = r.int(2000, 160000) / 1_000_000;
  s.cost += cost;
  s.lastAt = iso(sim.now);
  yield sim.event("sentinel.output", {
    sentinelId: "implementation-observer", codonId: c.spec.codonId, triggerNumber: s.triggers, outputType: "text",
    content: sentinelReport(sim.corpus, r, c.spec.codonId), cost, tokens: { input: r.int(1000, 150000), output: r.int(20, 900) }, eventCount: r.int(1, 30),
  }, 3000);
  if (r.chance(0.15)) yield sentinelStates(sim, c);
}

function snapshot(sim: Sim, c: Codon, withFile: boolean): SimStep {
  const recent = withFile && sim.lastBody && sim.r.chance(0.6)
    ? { path: sim.lastBody.path, content: sim.lastBody.content, timestamp: iso(sim.lastBody.at) }
    : null;
  return { kind: "snapshot", at: sim.tick(0, 30), codonStartAt: c.startAt, totalCost: sim.totalCost + c.cost, recentFileAccess: recent };
}

/** One file body in a `file.updated`, followed (p = 0.77) by a byte-identical repeat of a recent body. */
function* emitFile(sim: Sim, path: string, content: string, action: "created" | "modified"): Generator<SimStep> {
  const ev = sim.event("file.updated", fileUpdated(sim.o.schema, path, content, action), 10);
  yield ev;
  sim.lastBody = { path, content, at: ev.at };
  sim.touched.push(path);
  if (sim.touched.length > 64) sim.touched.shift();
  const f = { path, content };
  sim.repo.recent.push(f);
  if (sim.repo.recent.length > 64) sim.repo.recent.shift();
  // 0.77 repeats per new body → 0.77/1.77 = 43.5% of bodies are repeats.
  if (sim.r.chance(0.77)) {
    const again = sim.repo.repeatCandidate();
    if (again) yield sim.event("file.updated", fileUpdated(sim.o.schema, again.path, again.content, "modified"), 50);
  }
}

/** One assistant message: 1–2 content blocks, their usage and cost transitions, then tool results. */
function* message(sim: Sim, c: Codon): Generator<SimStep> {
  const r = sim.r;
  const { codonId } = c.spec;
  c.messages += 1;
  const blocks = r.chance(0.45) ? 2 : 1;
  const results: (() => Generator<SimStep>)[] = [];
  const usages: { tokens: TokenUsage; cost: number }[] = [];
  sim.tick(500, 2500);
  for (let b = 0; b < blocks; b++) {
    const u = drawUsage(r, c.spec.modelId);
    usages.push(u);
    yield sim.event("token.usage", { codonId, ...u.tokens, totalCost: u.cost, modelId: c.spec.modelId }, 1);
    const kind = drawBlock(r);
    if (kind === "message") {
      yield sim.event("assistant.action", { codonId, action: "message", content: prose(sim.corpus, r, r.logNormal(450, 1, 40, 12000)) }, 1);
      continue;
    }
    const id = toolUseId(r);
    const cap = sim.bodyCap();
    let input: Record<string, unknown>;
    switch (kind) {
      case "Read": {
        const f = sim.repo.pick(cap);
        input = { file_path: `${sim.root}/agentRoot/${f.path}` };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Read", f.content, READ_RESULT_LIMIT_CHARS, r.int(0, 40)), 40);
        });
        break;
      }
      case "Bash": {
        const k = r.pick(["testlog", "grep", "listing"] as const);
        const out = sim.corpus.body(k, r.logNormal(900, 1.4, 10, Math.min(cap, 120_000)), r);
        input = { command: k === "testlog" ? "npx vitest run" : k === "grep" ? `grep -rn "${r.pick(["journal", "state", "codon"])}" src` : "ls -la src", description: "Run a command" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Bash", out, BASH_RESULT_LIMIT_CHARS, r.int(5, 60000), k === "testlog" && r.chance(0.2)), 800);
        });
        break;
      }
      case "Edit": {
        const f = sim.repo.pick(cap);
        const { oldString, newString } = sim.repo.edit(f, cap);
        input = { file_path: `${sim.root}/agentRoot/${f.path}`, old_string: oldString, new_string: newString };
        const content = f.content;
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Edit", `The file ${sim.root}/agentRoot/${f.path} has been updated.`, READ_RESULT_LIMIT_CHARS, r.int(1, 30)), 60);
          if (r.chance(0.5)) yield* emitFile(sim, f.path, content, "modified");
          if (r.chance(0.2)) yield sim.event("filetree.updated", fileTree(sim.touched, iso(sim.now)), 10);
        });
        break;
      }
      case "Write": {
        const f = sim.repo.create(cap);
        input = { file_path: `${sim.root}/agentRoot/${f.path}`, content: f.content };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Write", `File created successfully at: ${sim.root}/agentRoot/${f.path}`, READ_RESULT_LIMIT_CHARS, r.int(1, 30)), 60);
          if (r.chance(0.6)) yield* emitFile(sim, f.path, f.content, "created");
          yield sim.event("filetree.updated", fileTree(sim.touched, iso(sim.now)), 10);
        });
        break;
      }
      case "TodoWrite": {
        const todos = [];
        for (let t = r.int(2, 8); t > 0; t--) {
          todos.push({ content: prose(sim.corpus, r, r.int(30, 120)).replace(/\n/g, " "), status: r.pick(["pending", "in_progress", "completed"]), activeForm: "Working" });
        }
        input = { todos };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "TodoWrite", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.", READ_RESULT_LIMIT_CHARS, 1), 20);
        });
        break;
      }
      case "Grep":
      case "Glob": {
        const out = sim.corpus.body(kind === "Grep" ? "grep" : "listing", r.logNormal(700, 1.2, 20, Math.min(cap, 60_000)), r);
        input = kind === "Grep" ? { pattern: r.pick(["codonId", "append\\(", "TODO"]), path: "src", output_mode: "content" } : { pattern: "**/*.ts" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, kind, out, BASH_RESULT_LIMIT_CHARS, r.int(5, 900)), 100);
        });
        break;
      }
      default: {
        const out = prose(sim.corpus, r, r.logNormal(3000, 1, 200, Math.min(cap, 80_000)));
        input = { url: `https://docs.example.com/${r.base36(6)}`, prompt: "Summarize the relevant section" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "WebFetch", out, BASH_RESULT_LIMIT_CHARS, r.int(300, 9000)), 2000);
        });
      }
    }
    yield sim.event("assistant.action", { codonId, action: "tool_use", content: "", toolName: kind, toolInput: input }, 1);
  }
  for (const u of usages) {
    for (const k of ["inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"] as const) c.tokens[k] += u.tokens[k];
    c.cost += u.cost;
    yield sim.transition("CostsIncremented", { runId: c.runId, codonId, costDelta: u.cost, tokensDelta: { ...u.tokens } }, 1);
    // The runtime counts once per usage-bearing block: two blocks of one message repeat the count.
    yield sim.transition("AssistantMessageCountUpdated", { runId: c.runId, codonId, newCount: c.messages }, 1);
  }
  for (const res of results) yield* res();
}
