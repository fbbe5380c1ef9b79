/**
 * A synthetic execution for tests and benchmarks: runs whose codon attempts end in every outcome
 * (completed, failed, skipped, crashed, still running), with retries and loop iterations, filler
 * events of a chosen size, and exact `resultingState`s (computed with the core reducer), written
 * as canonical journal lines. Deterministic for the same options.
 */
import { mkdirSync, openSync, writeSync, closeSync } from "node:fs";
import { evolve, initialState, layoutOf, nextResultingState, type ResultingState, type StateTransition } from "@hankweave-journal/core";

/** Shape of the generated journal. */
export interface SyntheticOptions {
  /** Repetitions of the all-outcomes scenario (each adds two runs). Default 1. */
  repeat?: number;
  /** assistant.action filler lines per codon attempt. Default 2. */
  fillerPerAttempt?: number;
  /** Approximate bytes of each filler line's text. Default 200. */
  fillerBytes?: number;
  /** Leave the last run running (its last attempt never ends). Default true. */
  leaveRunning?: boolean;
}

const BASE_MS = Date.parse("2026-03-05T12:00:00.000Z");
const TOKENS = { inputTokens: 10, outputTokens: 20, cacheCreationTokens: 30, cacheReadTokens: 40 };

/** Writes lines and keeps the fold needed for resultingState. */
class Writer {
  private state = initialState();
  private rs: ResultingState | null = null;
  private n = 0;
  private ms = BASE_MS;
  lines = 0;
  bytes = 0;
  constructor(private readonly fd: number) {}

  private write(type: string, data: unknown): void {
    this.ms += 1500 + (this.n % 7) * 311;
    const line = JSON.stringify({ id: `${this.ms}-s${(this.n++).toString(36)}`, timestamp: new Date(this.ms).toISOString(), type, data }) + "\n";
    this.bytes += writeSync(this.fd, line);
    this.lines += 1;
  }

  /** The timestamp the next line will carry. */
  nextTime(): string {
    return new Date(this.ms + 1500 + (this.n % 7) * 311).toISOString();
  }

  t(type: string, data: Record<string, unknown>): void {
    const transition: StateTransition = { type, data } as unknown as StateTransition;
    const at = this.nextTime();
    this.state = evolve(this.state, transition, at);
    this.rs = nextResultingState(this.rs, this.state, transition);
    const env: Record<string, unknown> = { transitionType: type };
    if (data.runId !== undefined) env.runId = data.runId;
    if (data.codonId !== undefined) env.codonId = data.codonId;
    env.transition = { type, data };
    env.resultingState = this.rs;
    this.write("state.transition", env);
  }

  filler(codonId: string, bytes: number, k: number): void {
    this.write("assistant.action", { codonId, action: "message", content: `step ${k} `.padEnd(bytes, "lorem ipsum dolor sit amet ") });
  }
}

function attempt(w: Writer, runId: string, codonId: string, end: "completed" | "failed" | "skipped" | "open", opts: Required<SyntheticOptions>, loop?: { loopId: string; iteration: number }): void {
  w.t("CodonStarted", loop ? { runId, codonId, loopContext: { ...loop, codonIndexInLoop: 0 } } : { runId, codonId });
  w.t("CodonTransitioned", { runId, codonId, from: "preparing", to: "starting", metadata: {} });
  w.t("CodonTransitioned", { runId, codonId, from: "starting", to: "initializing", metadata: { claudePid: 4242, claudeLogPath: `/logs/${codonId}.log` } });
  w.t("CodonTransitioned", { runId, codonId, from: "initializing", to: "running", metadata: { claudeSessionId: `sess-${codonId}` } });
  for (let k = 0; k < opts.fillerPerAttempt; k++) {
    w.filler(codonId, opts.fillerBytes, k);
    w.t("CostsIncremented", { runId, codonId, costDelta: 0.0125 * (k + 1), tokensDelta: TOKENS });
  }
  if (end === "completed") {
    w.t("CodonTransitioned", { runId, codonId, from: "running", to: "completed", metadata: { checkpointSha: "c0ffee".padEnd(40, "0"), resultMessageReceived: true } });
  } else if (end === "failed") {
    w.t("CodonTransitioned", { runId, codonId, from: "running", to: "failed", metadata: { exitCode: 1, failedDuring: "running", failureReason: { type: "api-error", retriable: true, message: "upstream 529" } } });
  } else if (end === "skipped") {
    w.t("CodonTransitioned", { runId, codonId, from: "running", to: "skipped", metadata: { skippedDuring: "running" } });
  }
}

/**
 * Write the synthetic journal into `exec` (creating `.hankweave/events/`). Returns counts.
 * Per repetition: run A (a completed, b crashed by RunCrashed) and run B (b completed, c failed
 * then retried to completion, review#0/#1 in a loop, d skipped, e left running unless
 * `leaveRunning` is false, then RunCompleted).
 * @example writeSyntheticExecution(dir, { repeat: 1 }) // {lines, bytes, attempts: 9, transitions}
 */
export function writeSyntheticExecution(exec: string, options: SyntheticOptions = {}): { lines: number; bytes: number; attempts: number } {
  const opts: Required<SyntheticOptions> = { repeat: 1, fillerPerAttempt: 2, fillerBytes: 200, leaveRunning: true, ...options };
  const layout = layoutOf(exec);
  mkdirSync(layout.eventsDir, { recursive: true });
  const fd = openSync(layout.journal, "w");
  const w = new Writer(fd);
  let attempts = 0;
  try {
    for (let r = 0; r < opts.repeat; r++) {
      const a = `run-${r}-a`;
      w.t("RunStarted", { runId: a, runFolder: `/runs/${a}`, gitBranch: `run-${a}`, startingConditions: { type: "fresh" }, serverPid: 1000 + r });
      attempt(w, a, "plan", "completed", opts);
      attempt(w, a, "build", "open", opts);
      w.t("RunCrashed", { runId: a, detectedAt: w.nextTime(), lastCodonStatus: "running" });
      attempts += 2;
      const b = `run-${r}-b`;
      const last = r === opts.repeat - 1;
      w.t("RunStarted", { runId: b, runFolder: `/runs/${b}`, gitBranch: `run-${b}`, startingConditions: { type: "continuation", source: { runId: a, afterCodon: "plan", checkpointSha: "ab".repeat(20) }, reason: "retry" }, serverPid: 2000 + r });
      attempt(w, b, "build", "completed", opts);
      attempt(w, b, "test", "failed", opts);
      attempt(w, b, "test", "completed", opts);
      attempt(w, b, "review#0", "completed", opts, { loopId: "review", iteration: 0 });
      attempt(w, b, "review#1", "completed", opts, { loopId: "review", iteration: 1 });
      attempt(w, b, "docs", "skipped", opts);
      attempts += 6;
      if (last && opts.leaveRunning) {
        attempt(w, b, "deploy", "open", opts);
        attempts += 1;
      } else {
        w.t("RunCompleted", { runId: b });
      }
    }
  } finally {
    closeSync(fd);
  }
  return { lines: w.lines, bytes: w.bytes, attempts };
}
