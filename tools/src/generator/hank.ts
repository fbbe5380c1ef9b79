/**
 * The simulated "hank" (the program of codons an execution runs) and its flattened execution plan,
 * shaped like the reference runtime's `executionPlan` entries (`{codon, codonId, loopContext?}`).
 */
import type { LoopContext } from "@hankweave-journal/core";

/** How a codon attempt ends in the simulation. */
export type CodonFate =
  | "complete"
  | "complete-sentinels"
  | "complete-no-session"
  | "retry-then-complete"
  | "skip-preparing"
  | "skip-running"
  | "crash"
  | "budget-complete"
  | "budget-fail"
  | "extend-complete";

/** One codon (or one loop iteration of a loop codon) the simulation will run. */
export interface CodonSpec {
  /** Runtime id: `name` or `name#iteration` inside loops. */
  codonId: string;
  /** Configured id (without `#n`). */
  baseId: string;
  name: string;
  description: string;
  modelId: string;
  sentinels: boolean;
  rigOps: string[];
  loopContext?: LoopContext;
  /** True for the last codon of a loop iteration (a `loop.iteration.completed` follows). */
  endsIteration?: boolean;
  /** True when this iteration is the loop's last. */
  finalIteration?: boolean;
  fate: CodonFate;
}

/** Model price table, USD per million tokens (as in the conformance executionPlan). */
export const MODELS: Record<string, { providerId: string; name: string; input: number; output: number; cacheRead: number; cacheWrite: number }> = {
  "claude-sonnet-4-6": { providerId: "anthropic", name: "Claude Sonnet 4.6", input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "claude-opus-4-6": { providerId: "anthropic", name: "Claude Opus 4.6", input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
  "claude-haiku-4-5": { providerId: "anthropic", name: "Claude Haiku 4.5", input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
};

const RIG_OPS = [
  "mkdir -p plan/reviews/old",
  "mv plan/reviews/current plan/reviews/old/$(date +%Y%m%d-%H%M%S)",
  "mkdir -p plan/reviews/current",
  "cd source/hankweave && bun install",
  "cd source/hankweave && timeout 900000 bun test > ../../plan/test-output.txt 2>&1",
  "git clone --depth 1 git@github.com:example/runtime.git source/runtime",
];

function spec(
  baseId: string,
  name: string,
  fate: CodonFate,
  opts: { sentinels?: boolean; modelId?: string; rigOps?: number; loop?: { loopId: string; iteration: number; index: number; ends: boolean; final: boolean } } = {},
): CodonSpec {
  const s: CodonSpec = {
    codonId: opts.loop ? `${baseId}#${opts.loop.iteration}` : baseId,
    baseId,
    name,
    description: `${name}: simulated codon`,
    modelId: opts.modelId ?? "claude-sonnet-4-6",
    sentinels: opts.sentinels ?? false,
    rigOps: RIG_OPS.slice(0, opts.rigOps ?? 0),
    fate,
  };
  if (opts.loop) {
    s.loopContext = { loopId: opts.loop.loopId, iteration: opts.loop.iteration, codonIndexInLoop: opts.loop.index };
    s.endsIteration = opts.loop.ends;
    s.finalIteration = opts.loop.final;
  }
  return s;
}

/**
 * The coverage part of every execution, split by run: run 1 ends in a crash, run 2 (a
 * continuation) in a budget failure, run 3 (a retry continuation) carries the bulk and completes.
 * Together they exercise every transition type and every codon outcome.
 */
export function coverageRuns(): CodonSpec[][] {
  const run1: CodonSpec[] = [
    spec("step-1-prep", "Step 1: Prep", "complete", { rigOps: 4 }),
    spec("step-2-plan", "Step 2: Plan with sentinel", "complete-sentinels", { sentinels: true, modelId: "claude-opus-4-6", rigOps: 2 }),
    spec("review", "Blind review", "complete", { loop: { loopId: "blind-reviews", iteration: 0, index: 0, ends: false, final: false }, rigOps: 3 }),
    spec("update", "Update after review", "extend-complete", { loop: { loopId: "blind-reviews", iteration: 0, index: 1, ends: true, final: false } }),
    spec("review", "Blind review", "complete", { loop: { loopId: "blind-reviews", iteration: 1, index: 0, ends: false, final: false }, rigOps: 3 }),
    spec("update", "Update after review", "complete", { loop: { loopId: "blind-reviews", iteration: 1, index: 1, ends: true, final: true } }),
    spec("step-4-flaky", "Step 4: Flaky tool run", "retry-then-complete", { rigOps: 1 }),
    spec("step-5-optional", "Step 5: Optional lint", "skip-preparing"),
    spec("step-6-quick", "Step 6: Quick check", "complete-no-session", { modelId: "claude-haiku-4-5" }),
    spec("step-7-implement", "Step 7: Implement", "crash", { rigOps: 2 }),
  ];
  const run2: CodonSpec[] = [
    spec("step-7-implement", "Step 7: Implement", "budget-complete", { rigOps: 2 }),
    spec("step-8-capped", "Step 8: Capped review", "budget-fail"),
  ];
  const run3: CodonSpec[] = [
    spec("step-8-capped", "Step 8: Capped review", "complete"),
    spec("step-9-skim", "Step 9: Skim", "skip-running"),
  ];
  return [run1, run2, run3];
}

/** `count` bulk codons: a two-codon implement/review loop (the implementer watched by a sentinel). */
export function bulkCodons(count: number, firstIteration: number, totalIterations: number): CodonSpec[] {
  const out: CodonSpec[] = [];
  for (let i = 0; out.length < count; i++) {
    const iteration = firstIteration + i;
    const final = iteration === totalIterations - 1;
    out.push(spec("implement", "Implement-Review Loop: implement", "complete-sentinels", {
      sentinels: true, rigOps: 2, loop: { loopId: "implementation-review-loop", iteration, index: 0, ends: false, final },
    }));
    if (out.length < count) {
      out.push(spec("update", "Implement-Review Loop: update", "complete", {
        loop: { loopId: "implementation-review-loop", iteration, index: 1, ends: true, final },
      }));
    }
  }
  return out;
}

/** One `executionPlan` entry for a codon spec (shape of the runtime's flattened plan). */
export function planEntry(s: CodonSpec): Record<string, unknown> {
  const m = MODELS[s.modelId];
  const codon: Record<string, unknown> = {
    type: "codon",
    id: s.baseId,
    name: s.name,
    promptFile: `/home/agent/hanks/plan-gen/codons/${s.baseId}/prompt.md`,
    appendSystemPromptFile: ["/home/agent/hanks/plan-gen/codons/system-prompt.md"],
    model: {
      providerId: m.providerId, modelId: s.modelId, name: m.name, tool_call: true,
      cost: { input: m.input, output: m.output, cache_read: m.cacheRead, cache_write: m.cacheWrite },
      limit: { context: 200000, output: 64000 },
    },
    continuationMode: "fresh",
  };
  if (s.rigOps.length > 0) {
    codon.rigSetup = s.rigOps.map((run) => ({ type: "command", command: { run, workingDirectory: "project" }, allowFailure: run.startsWith("mv") }));
  }
  codon.description = s.description;
  if (s.sentinels) codon.sentinels = [{ id: "implementation-observer", path: "/home/agent/hanks/plan-gen/sentinels/implementation-observer.json" }];
  codon.maxExtensions = 100;
  const entry: Record<string, unknown> = { codon, codonId: s.codonId };
  if (s.loopContext) entry.loopContext = s.loopContext;
  return entry;
}
