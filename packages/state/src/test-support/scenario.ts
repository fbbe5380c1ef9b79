/**
 * Test support (not exported from the package): turn a list of choices (from fast-check or a
 * seeded PRNG) into a VALID sequence of engine steps — transitions the reducer accepts, plan
 * updates and ordinary events — by simulating the codon state machine. Codon ids come from a
 * small pool so retries (several records per codonId) happen.
 */
import type { StateTransition } from "@hankweave-journal/core";
import { META, T, tokens } from "./builders.js";

/** One thing to do to an engine. */
export type Step =
  | { kind: "transition"; t: StateTransition }
  | { kind: "plan"; plan: unknown[] }
  | { kind: "event"; type: string; data: unknown };

type Status = "preparing" | "starting" | "initializing" | "running" | "completing-sentinels";

export interface ScenarioOptions {
  /** serverPid of RunStarted (default: this process, so reopening does not detect a crash). */
  serverPid?: number;
  /** Prefix of run ids (keep runs unique across processes). */
  runPrefix?: string;
}

const CODON_POOL = ["alpha", "beta", "gamma"];

/** Build a valid step list from `choices` (each a non-negative integer) and `reals` in [0, 1). */
export function scenario(choices: readonly number[], reals: readonly number[] = [], opts: ScenarioOptions = {}): Step[] {
  const steps: Step[] = [];
  let run: string | null = null;
  let runs = 0;
  let codon: { id: string; status: Status } | null = null;
  let r = 0;
  const real = (): number => (reals.length ? reals[r++ % reals.length] : ((r++ * 0.6180339887) % 1));
  const t = (x: StateTransition): void => {
    steps.push({ kind: "transition", t: x });
  };
  for (const c of choices) {
    if (run === null) {
      const acts = ["startRun", "startRun", "plan", "initialCheckpoint", "event"];
      const a = acts[c % acts.length];
      if (a === "startRun") {
        run = `${opts.runPrefix ?? "run"}-${++runs}`;
        t(T.runStarted(run, { serverPid: opts.serverPid ?? process.pid }));
      } else if (a === "plan") steps.push({ kind: "plan", plan: [{ codonId: CODON_POOL[c % 3], n: c }] });
      else if (a === "initialCheckpoint") t(T.initialCheckpointSet(`sha-${c}`));
      else steps.push({ kind: "event", type: "info", data: { message: `idle ${c}` } });
      continue;
    }
    if (codon === null) {
      const acts = ["startCodon", "startCodon", "startCodon", "startCodon", "startCodon", "completeRun", "failRun", "event", "plan"];
      const a = acts[c % acts.length];
      if (a === "startCodon") {
        codon = { id: CODON_POOL[Math.floor(c / acts.length) % CODON_POOL.length], status: "preparing" };
        t(T.codonStarted(run, codon.id));
      } else if (a === "completeRun" || a === "failRun") {
        t(a === "completeRun" ? T.runCompleted(run) : T.runFailed(run));
        run = null;
      } else if (a === "plan") steps.push({ kind: "plan", plan: [{ codonId: "alpha", n: c }] });
      else steps.push({ kind: "event", type: "token.usage", data: { codonId: "alpha", inputTokens: c, outputTokens: 1 } });
      continue;
    }
    const id = codon.id;
    const fwd: Record<Status, string[]> = {
      preparing: ["starting", "failed", "skipped", "starting", "starting", "starting"],
      starting: ["initializing", "failed", "skipped", "checkpoint", "initializing", "initializing", "initializing"],
      initializing: ["running", "completed", "failed", "skipped", "running", "running", "running", "running"],
      running: ["inc", "inc", "inc", "upd", "msg", "ext", "final", "completed", "completing-sentinels", "failed", "skipped", "event", "ckpt-late"],
      "completing-sentinels": ["completed", "failed", "skipped"],
    };
    const acts = fwd[codon.status];
    const a = acts[c % acts.length];
    const from = codon.status;
    const k = Math.floor(real() * 1000) / 997;
    switch (a) {
      case "starting":
        t(T.codonTransitioned(run, id, from, "starting", c % 2 ? { checkpointSha: `rig-${c}` } : {}));
        codon.status = "starting";
        break;
      case "initializing":
        t(T.codonTransitioned(run, id, from, "initializing", META.initializing(1000 + c, `${id}.log`)));
        codon.status = "initializing";
        break;
      case "running":
        t(T.codonTransitioned(run, id, from, "running", META.running(`s-${c}`)));
        codon.status = "running";
        break;
      case "completing-sentinels":
        t(T.codonTransitioned(run, id, from, "completing-sentinels"));
        codon.status = "completing-sentinels";
        break;
      case "completed":
        t(T.codonTransitioned(run, id, from, "completed", META.completed(`done-${c}`)));
        codon = null;
        break;
      case "failed":
        t(T.codonTransitioned(run, id, from, "failed", META.failed(from)));
        codon = null;
        break;
      case "skipped":
        t(T.codonTransitioned(run, id, from, "skipped", META.skipped(from)));
        codon = null;
        break;
      case "checkpoint":
        t(T.checkpointCreated(run, id, "rig-setup", `rig2-${c}`));
        break;
      case "inc":
        t(T.costsIncremented(run, id, k * 0.01, tokens({ inputTokens: c % 50, outputTokens: 3, cacheReadTokens: c })));
        break;
      case "upd":
        t(T.costsUpdated(run, id, k, tokens({ inputTokens: c })));
        break;
      case "msg":
        t(T.assistantMessageCountUpdated(run, id, c % 9));
        break;
      case "ext":
        t(T.extensionCountUpdated(run, id, c % 4));
        break;
      case "final":
        t(T.codonFinalCostSet(run, id, k * 2, tokens({ outputTokens: c })));
        break;
      case "ckpt-late":
        t(T.checkpointCreated(run, id, "completed", `early-${c}`));
        break;
      default:
        steps.push({ kind: "event", type: "assistant.action", data: { codonId: id, action: "message", content: `m${c}` } });
    }
  }
  return steps;
}

/** A small deterministic PRNG (mulberry32) for seeded scenarios outside fast-check. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` seeded choices for `scenario`. */
export function seededChoices(seed: number, n: number): number[] {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => Math.floor(rnd() * 1_000_000));
}
