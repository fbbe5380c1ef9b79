/**
 * The simulation's shared state and the step types it yields: a seeded rng, the body corpus, the
 * virtual workspace, the simulated clock and the size budget.
 */
import type { StateTransition, TokenUsage } from "@hankweave-journal/core";
import { buildCorpus, type Corpus } from "./corpus.js";
import { BODY_HEAVY, type GeneratorProfile } from "./profile.js";
import { realBlocks } from "./text-model.js";
import type { CodonSpec } from "./hank.js";
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
  /** Tool mix, sizes, body rates and text (default: body-heavy, today's generator). */
  profile?: GeneratorProfile;
}

/** Average bytes per event used to turn an event target into a byte-like budget (measured). */
export const BYTES_PER_EVENT_ESTIMATE = 900;
/** Bytes kept for the end of the execution (last codon completion, snapshot, RunCompleted). */
const TAIL_RESERVE_BYTES = 6_000;

export interface Codon {
  spec: CodonSpec;
  runId: string;
  startAt: number;
  cost: number;
  tokens: TokenUsage;
  messages: number;
  extensions: number;
  sentinel: { loadedAt: string; calls: number; cost: number; lastAt: string | null; triggers: number } | null;
  /** The real profile's prompt-cache context (tokens so far), made on the first message. */
  session?: { context: number };
}

export const zeroTokens = (): TokenUsage => ({ inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 });
export const iso = (ms: number): string => new Date(ms).toISOString();

/** Mutable simulation state (one per planned execution). */
export class Sim {
  readonly r: Rng;
  readonly corpus: Corpus;
  readonly repo: RepoModel;
  now: number;
  private readonly targetUnits: number;
  readonly unitsPerByte: number;
  readonly root: string;
  readonly p: GeneratorProfile;
  totalCost = 0;
  touched: string[] = [];
  lastBody: { path: string; content: string; at: number } | null = null;

  constructor(readonly o: PlanOptions) {
    this.r = createRng(o.seed);
    this.p = o.profile ?? BODY_HEAVY;
    const targetBytes = "bytes" in o.target ? o.target.bytes : o.target.events * BYTES_PER_EVENT_ESTIMATE;
    if (this.p.text === "zipf") {
      const poolChars = Math.min(this.p.poolMaxChars, Math.max(192 << 10, Math.floor(targetBytes / 16)));
      const rr = this.r.fork();
      this.corpus = buildCorpus(rr, poolChars, realBlocks(rr));
    } else {
      const poolChars = Math.min(4 << 20, Math.max(96 << 10, Math.floor(targetBytes / 24)));
      this.corpus = buildCorpus(this.r.fork(), poolChars);
    }
    this.repo = new RepoModel(this.corpus, this.r.fork(), this.p.fileSize);
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
