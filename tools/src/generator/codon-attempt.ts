/**
 * One codon attempt, step by step as the reference runtime journals it: rig setup, the state
 * machine walk, the agent's messages, sentinels, and each outcome (completed, completing-sentinels,
 * retried, skipped, crashed, budget exceeded).
 */
import type { CodonSpec } from "./hank.js";
import { emitFile, message } from "./agent-message.js";
import { fileTree, sentinelReport } from "./payloads.js";
import { iso, zeroTokens, type Codon, type Sim, type SimStep } from "./sim.js";

/** How an attempt ended, and the last checkpoint it made. */
export interface CodonOutcome {
  result: "completed" | "failed" | "skipped" | "crashed";
  sha: string | null;
}

/** A codon: one attempt, or a failed attempt and its retry (same codonId, new CodonStarted). */
export function* runCodon(sim: Sim, spec: CodonSpec, runId: string, budget: number): Generator<SimStep, CodonOutcome> {
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
  const recent = withFile && sim.lastBody && sim.r.chance(sim.p.snapshotFile)
    ? { path: sim.lastBody.path, content: sim.lastBody.content, timestamp: iso(sim.lastBody.at) }
    : null;
  return { kind: "snapshot", at: sim.tick(0, 30), codonStartAt: c.startAt, totalCost: sim.totalCost + c.cost, recentFileAccess: recent };
}
