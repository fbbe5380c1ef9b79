/**
 * fast-check arbitraries for the reducer (tests only; `@hankweave-journal/core/testing`).
 *
 * `validTransitionSequence()` yields journals the reference runtime could have written: runs that
 * start, codons that walk the transition map with the metadata each target needs, cost updates
 * only while running, sentinels only while active, checkpoints, retries (a new record for a codon
 * id that failed or was skipped), crashes, and several runs. Every step applies: folding it yields
 * no finding at all. `anyTransition()` yields arbitrary, mostly invalid transitions.
 *
 * @example fc.assert(fc.property(validTransitionSequence(), (steps) => { ...fold steps... }))
 */
import fc from "fast-check";
import type { CodonStatus, StateTransition, TransitionMetadata } from "../state-types.js";
import { clockAt } from "./given-then.js";
import { T, META, sentinel, tokens } from "./transitions.js";

/** One journaled transition with its line timestamp. */
export type TimedTransition = readonly [StateTransition, string];

interface Choice { op: number; pick: number; cost: number; n: number }

const choiceArb: fc.Arbitrary<Choice> = fc.record({
  op: fc.noBias(fc.integer({ min: 0, max: 2_519 })),
  pick: fc.noBias(fc.integer({ min: 0, max: 2_519 })),
  cost: fc.double({ min: 0, max: 2, noNaN: true, noDefaultInfinity: true }),
  n: fc.nat({ max: 50_000 }),
});

interface Model {
  runSeq: number;
  runId: string | null;
  codonSeq: number;
  codonId: string | null;
  status: CodonStatus | null;
  /** Codon ids of the current run that failed or were skipped (retry candidates). */
  ended: string[];
  /** The active codon has an earlier record in this run. */
  retried: boolean;
}

/** The next valid transition for the model, chosen by `c` (mutates the model: generator-internal). */
function step(m: Model, c: Choice, at: string): StateTransition {
  const options: (() => StateTransition)[] = [];
  if (m.runId === null) {
    options.push(() => {
      const prev = m.runSeq > 0 ? `r${m.runSeq - 1}` : null;
      m.runId = `r${m.runSeq++}`;
      m.ended = [];
      const sc = prev !== null && c.pick % 2 === 0
        ? { type: "continuation" as const, source: { runId: prev, afterCodon: null, checkpointSha: `sha${c.n}` }, reason: "continue" as const }
        : { type: "fresh" as const };
      return T.runStarted(m.runId, { startingConditions: sc, serverPid: 1000 + c.n });
    });
    if (c.pick % 7 === 0) options.push(() => T.initialCheckpointSet(`init${c.n}`));
    return options[c.op % options.length]();
  }
  const r = m.runId;
  if (m.codonId === null || m.status === null) {
    options.push(() => {
      const retry = m.ended.length > 0 && c.pick % 3 === 0;
      m.codonId = retry ? m.ended[c.n % m.ended.length] : `c${m.codonSeq++}${c.pick % 4 === 1 ? "#0" : ""}`;
      m.status = "preparing";
      m.retried = retry;
      const lc = m.codonId.endsWith("#0") ? { loopId: "loop", iteration: 0, codonIndexInLoop: c.n % 3 } : undefined;
      return T.codonStarted(r, m.codonId, lc);
    });
    if (c.pick % 3 === 0) {
      options.push(() => { m.runId = null; return T.runCompleted(r); });
      options.push(() => { m.runId = null; return T.runFailed(r); });
    }
    if (c.pick % 5 === 0) options.push(() => { m.runId = null; return T.runCrashed(r, at, "completed"); });
    return options[c.op % options.length]();
  }
  const id = m.codonId;
  const s = m.status;
  const move = (to: CodonStatus, meta: TransitionMetadata = {}) => (): StateTransition => {
    const t = T.codonTransitioned(r, id, s, to, meta);
    if (to === "completed" || to === "failed" || to === "skipped") {
      if (to !== "completed") m.ended.push(id);
      m.codonId = null;
      m.status = null;
    } else {
      m.status = to;
    }
    return t;
  };
  const forward: Partial<Record<CodonStatus, () => StateTransition>> = {
    preparing: move("starting", c.pick % 2 ? { checkpointSha: `rig${c.n}` } : {}),
    starting: move("initializing", { ...META.initializing(c.n, `runs/${r}/${id}.log`), ...(c.pick % 3 ? {} : { previousSessionId: `p${c.n}` }) }),
    initializing: c.pick % 7 === 0 ? move("completed", META.completed(`done${c.n}`)) : move("running", META.running(`s${c.n}`)),
    running: c.pick % 2 ? move("completing-sentinels") : move("completed", META.completed(`done${c.n}`, c.pick % 5 ? {} : { budgetExceeded: { currency: "cost", limit: 1, used: c.cost } })),
    "completing-sentinels": move("completed", META.completed(`done${c.n}`, { resultMessageReceived: c.pick % 2 === 0 })),
  };
  const fwd = forward[s];
  if (fwd) options.push(fwd, fwd, fwd);
  if (c.pick % 4 === 0) {
    options.push(move("failed", META.failed(s, c.pick % 8 ? { checkpointSha: `err${c.n}` } : {})));
    if (s !== "completing-sentinels") options.push(move("skipped", META.skipped(s, c.pick % 8 ? { checkpointSha: `skip${c.n}` } : {})));
  }
  if (s === "preparing" || s === "starting") options.push(() => T.checkpointCreated(r, id, "rig-setup", `rig${c.n}`));
  if (s !== "preparing") {
    options.push(() => {
      return T.sentinelStatesUpdated(r, id, [sentinel("obs", { llmCallCount: c.n % 9, totalCost: c.cost })], c.cost);
    });
  }
  if (s === "running") {
    const tk = tokens({ inputTokens: c.n % 100, outputTokens: c.pick, cacheCreationTokens: c.n, cacheReadTokens: c.op });
    options.push(() => T.costsIncremented(r, id, c.cost, tk), () => T.costsIncremented(r, id, c.cost, tk));
    options.push(() => T.codonFinalCostSet(r, id, c.cost, tk));
    // CostsUpdated / ExtensionCountUpdated / AssistantMessageCountUpdated target the FIRST record
    // of the codon in the run: they apply only to a first attempt.
    if (!m.retried) {
      options.push(() => T.costsUpdated(r, id, c.cost, tk), () => T.extensionCountUpdated(r, id, c.n % 5));
      options.push(() => T.assistantMessageCountUpdated(r, id, c.n % 40));
    }
  }
  if (c.pick % 11 === 0) {
    options.push(() => { m.runId = null; m.codonId = null; m.status = null; return T.runCrashed(r, at, s); });
  }
  return options[c.op % options.length]();
}

/**
 * Valid transition sequences (every step applies without a finding), timed `clockAt(i)`.
 * @param maxLength upper bound on the number of transitions (default 120).
 */
export function validTransitionSequence(maxLength = 120): fc.Arbitrary<TimedTransition[]> {
  return fc.array(choiceArb, { maxLength, size: "max" }).map((choices) => {
    const m: Model = { runSeq: 0, runId: null, codonSeq: 0, codonId: null, status: null, ended: [], retried: false };
    return choices.map((c, i) => [step(m, c, clockAt(i)), clockAt(i)] as const);
  });
}

const statusArb = fc.constantFrom<string>(
  "preparing", "starting", "initializing", "running", "completing-sentinels", "completed", "failed", "skipped", "paused", "",
);
const idArb = fc.constantFrom("r0", "r1", "ghost", "");
const codonArb = fc.constantFrom("c0", "c1", "c1#0", "nope");
const junk = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string({ maxLength: 4 }), fc.integer(), fc.double(), fc.boolean(), fc.constant({}));

/**
 * Arbitrary transitions, valid or not: any of the 14 types (or an unknown one, or not an object),
 * run/codon ids from a small pool, any from/to (unknown statuses included), partial or ill-typed
 * metadata and payload fields.
 */
export function anyTransition(): fc.Arbitrary<StateTransition> {
  const metadata = fc.record({
    claudePid: fc.oneof(fc.nat(), junk), claudeLogPath: fc.oneof(fc.string({ maxLength: 3 }), junk),
    claudeSessionId: fc.oneof(fc.string({ maxLength: 3 }), junk), checkpointSha: fc.oneof(fc.string({ maxLength: 3 }), junk),
    exitCode: fc.oneof(fc.integer(), junk), failureReason: fc.oneof(fc.constant({ type: "unknown", retriable: false }), junk),
    failedDuring: fc.oneof(statusArb, junk), skippedDuring: fc.oneof(statusArb, junk),
  }, { requiredKeys: [] });
  const typed = fc.record({
    type: fc.constantFrom(
      "RunStarted", "RunCompleted", "RunFailed", "RunCrashed", "CodonStarted", "CodonTransitioned", "CostsUpdated",
      "CostsIncremented", "AssistantMessageCountUpdated", "ExtensionCountUpdated", "CheckpointCreated",
      "InitialCheckpointSet", "CodonFinalCostSet", "SentinelStatesUpdated", "NotAType",
    ),
    data: fc.record({
      runId: fc.oneof(idArb, junk), codonId: fc.oneof(codonArb, junk), from: statusArb, to: statusArb,
      metadata: fc.oneof(metadata, junk), cost: fc.oneof(fc.double(), junk), costDelta: fc.oneof(fc.double(), junk),
      tokens: fc.oneof(fc.constant(tokens({ inputTokens: 1 })), junk), tokensDelta: fc.oneof(fc.constant(tokens({ outputTokens: 1 })), junk),
      finalCost: fc.oneof(fc.double(), junk), finalTokens: fc.oneof(fc.constant(tokens()), junk),
      newCount: fc.oneof(fc.nat(), junk), extensionCount: fc.oneof(fc.nat(), junk),
      checkpointType: fc.oneof(fc.constantFrom("rig-setup", "completed", "error", "skipped"), junk),
      sha: fc.oneof(fc.string({ maxLength: 3 }), junk), detectedAt: fc.oneof(fc.constant(clockAt(9)), junk),
      sentinelStates: fc.oneof(fc.constant([sentinel("s")]), junk), totalCost: fc.oneof(fc.double(), junk),
      loopContext: fc.oneof(fc.constant({ loopId: "l", iteration: 0, codonIndexInLoop: 0 }), junk),
    }, { requiredKeys: [] }),
  });
  return fc.oneof(
    { weight: 9, arbitrary: typed as unknown as fc.Arbitrary<StateTransition> },
    { weight: 1, arbitrary: junk as unknown as fc.Arbitrary<StateTransition> },
  );
}
