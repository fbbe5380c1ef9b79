import { describe, expect, it } from "vitest";
import { TRANSITION_TYPES } from "@hankweave-journal/core";
import { createRng } from "./prng.js";
import { planExecution, type SimStep } from "./planner.js";
import { parseSize } from "./size.js";

/** Run the pure planner with a measure that counts serialized step sizes (no I/O). */
function plan(seed: number, bytes: number, schema: 1 | 2 = 1): SimStep[] {
  let used = 0;
  let events = 0;
  const out: SimStep[] = [];
  for (const s of planExecution({ seed, target: { bytes }, schema, measure: { bytes: () => used, events: () => events } })) {
    out.push(s);
    events += 1;
    used += 80 + JSON.stringify(s.kind === "event" ? s.data : s.kind === "transition" ? s.transition : s.kind === "plan" ? s.plan : s.recentFileAccess ?? {}).length;
  }
  return out;
}

const transitions = (steps: SimStep[]) =>
  steps.flatMap((s) => (s.kind === "transition" ? [s.transition as { type: string; data: Record<string, unknown> }] : []));

describe("prng", () => {
  it("gives the same sequence for the same seed and a different one for another seed", () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 50 }, () => a.next());
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 50 }, () => c.next())).not.toEqual(sa);
    expect(sa.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe("planExecution (pure)", () => {
  it("is deterministic for a seed", () => {
    expect(JSON.stringify(plan(7, 600_000))).toBe(JSON.stringify(plan(7, 600_000)));
    expect(JSON.stringify(plan(8, 600_000))).not.toBe(JSON.stringify(plan(7, 600_000)));
  });

  it("emits all 14 transition types even for a small target", () => {
    const types = new Set(transitions(plan(1, 400_000)).map((t) => t.type));
    expect([...TRANSITION_TYPES].filter((t) => !types.has(t))).toEqual([]);
  });

  it("simulates crash + continuation, budget failure + retry run, loops, retries and skips", () => {
    const ts = transitions(plan(3, 800_000));
    const runStarts = ts.filter((t) => t.type === "RunStarted").map((t) => t.data.startingConditions as { type: string; reason?: string });
    expect(runStarts.map((c) => c.type)).toEqual(["fresh", "continuation", "continuation"]);
    expect(runStarts.slice(1).map((c) => c.reason)).toEqual(["continue", "retry"]);
    const order = ts.map((t) => t.type).filter((t) => t.startsWith("Run"));
    expect(order).toEqual(["RunStarted", "RunCrashed", "RunStarted", "RunFailed", "RunStarted", "RunCompleted"]);
    const started = ts.filter((t) => t.type === "CodonStarted").map((t) => t.data.codonId as string);
    expect(started.filter((id) => id === "step-4-flaky")).toHaveLength(2); // failed attempt, then retry
    expect(started).toContain("review#1");
    const loopCtx = ts.find((t) => t.type === "CodonStarted" && t.data.codonId === "review#1")?.data.loopContext;
    expect(loopCtx).toEqual({ loopId: "blind-reviews", iteration: 1, codonIndexInLoop: 0 });
    const edges = ts.filter((t) => t.type === "CodonTransitioned").map((t) => `${t.data.from}>${t.data.to}`);
    for (const e of ["preparing>skipped", "running>skipped", "running>failed", "initializing>completed", "running>completing-sentinels", "completing-sentinels>completed"]) {
      expect(edges).toContain(e);
    }
    const budget = ts.filter((t) => t.type === "CodonTransitioned" && (t.data.metadata as Record<string, unknown>)?.budgetExceeded);
    expect(budget.map((t) => t.data.to)).toEqual(["completed", "failed"]);
  });

  it("counts each assistant message on every usage-bearing block (AssistantMessageCountUpdated repeats)", () => {
    const counts = transitions(plan(5, 500_000)).filter((t) => t.type === "AssistantMessageCountUpdated").map((t) => `${t.data.codonId}:${t.data.newCount}`);
    const repeats = counts.filter((c, i) => i > 0 && counts[i - 1] === c).length;
    expect(repeats).toBeGreaterThan(counts.length * 0.1);
  });

  it("journals non-transition events of all three journaled categories in the runtime's order", () => {
    const steps = plan(9, 500_000);
    const types = new Set(steps.flatMap((s) => (s.kind === "event" ? [s.type] : [])));
    for (const t of ["assistant.action", "tool.result", "token.usage", "codon.started", "codon.completed", "info", "error",
      "rig.setup.completed", "rig.setup.failed", "file.updated", "filetree.updated", "loop.iteration.completed",
      "sentinel.loaded", "sentinel.triggered", "sentinel.output", "sentinel.unloaded", "codon.extended"]) {
      expect(types.has(t), t).toBe(true);
    }
    // codon.started follows the initializing→running transition (as in plan-gen-execution).
    const i = steps.findIndex((s) => s.kind === "event" && s.type === "codon.started");
    const prev = steps[i - 1];
    expect(prev.kind === "transition" && (prev.transition.data as { to?: string }).to).toBe("running");
  });

  it("v2 file.updated carries sha256, bytes and source instead of content", () => {
    const f = plan(4, 400_000, 2).find((s) => s.kind === "event" && s.type === "file.updated");
    expect(f && f.kind === "event" ? Object.keys(f.data) : []).toEqual(["path", "filename", "sha256", "bytes", "source", "action"]);
  });

  it("uses a non-decreasing clock", () => {
    const at = plan(6, 300_000).map((s) => s.at);
    expect(at.every((t, i) => i === 0 || t >= at[i - 1])).toBe(true);
  });
});

describe("parseSize", () => {
  it("reads decimal and binary units and rejects nonsense", () => {
    expect(parseSize("100MB")).toBe(100_000_000);
    expect(parseSize("1GB")).toBe(1_000_000_000);
    expect(parseSize("512KiB")).toBe(512 * 1024);
    expect(parseSize("2e6")).toBe(2_000_000);
    expect(parseSize("ten")).toBeNull();
    expect(parseSize("5XB")).toBeNull();
  });
});
