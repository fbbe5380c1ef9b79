/**
 * Write a whole execution directory from the planner, through the product's own state engine
 * (so `state.json` is the fold of the journal by construction): `events/events.jsonl`,
 * `events.meta.json`, `state.json`, `state.json.bak`, `execution-meta.json`.
 */
import { promises as fsp } from "node:fs";
import { JournalError, layoutOf, type HankweaveState } from "@hankweave-journal/core";
import { makeEventId, serializeSidecar, type NewEvent } from "@hankweave-journal/journal";
import { serializeState } from "@hankweave-journal/state";
import { directSink, engineSink, type StepSink } from "./sinks.js";
import { planExecution, type SimStep, type SizeTarget } from "./planner.js";
import { createRng } from "./prng.js";
import { profileByName, type ProfileName } from "./profile.js";

export interface GenerateOptions {
  /** Seed of every random choice: same seed + options → same bytes. */
  seed: number;
  target: SizeTarget;
  /**
   * `body-heavy` (default: today's generator, large inline bodies) or `real` (shaped like the
   * reference runtime's journals, calibrated on conformance/plan-gen-execution; schema v2).
   */
  profile?: ProfileName;
  /** Event schema version (default: the profile's; body-heavy 1 = inline `file.updated` bodies, real 2). */
  schema?: 1 | 2;
  /** Leave an unterminated final fragment (a torn tail) after the last line. */
  torn?: boolean;
  /**
   * `engine` (default up to 64 MB): through the state engine. `direct` (default above): the same
   * functions writing large buffers, byte-identical output, ~5× faster.
   */
  writer?: "engine" | "direct";
  /** Called about every 16 MB with the bytes written so far. */
  onProgress?: (bytes: number) => void;
}

export interface GenerateReport {
  exec: string;
  /** Size of events.jsonl (torn fragment included). */
  bytes: number;
  /** Complete lines written. */
  lines: number;
  transitions: number;
  /** Bytes of the unterminated fragment (0 unless `torn`). */
  tornBytes: number;
  seconds: number;
}

/** Non-transition events are written in batches of at most this many (one write each). */
const EVENT_BATCH_MAX = 256;
/** Byte targets up to this size go through the state engine by default. */
export const ENGINE_MAX_BYTES = 64 * 1024 * 1024;
const PROGRESS_EVERY_BYTES = 16 * 1024 * 1024;

const iso = (ms: number): string => new Date(ms).toISOString();

/** The terminal records of the current run, newest first (what `state.snapshot.completedCodons` lists). */
function completedCodonsOf(state: HankweaveState): unknown[] {
  const run = state.runs.find((r) => r.runId === state.currentRunId);
  if (!run) return [];
  const out: unknown[] = [];
  for (let i = run.codons.length - 1; i >= 0; i--) {
    const s = run.codons[i].status;
    if (s === "completed" || s === "failed" || s === "skipped") out.push(run.codons[i]);
  }
  return out;
}

/**
 * Generate one execution directory at `exec` (created if absent; refused with
 * GENERATE_TARGET_EXISTS when it already holds a journal or state).
 *
 * Guarantees: deterministic bytes for the same options (injected clock and seeded randomness);
 * every transition accepted by the engine (it rejects anything the reducer would drop); the
 * journal is within a few KB of a byte target. Does not fsync (durability "none").
 *
 * @example await generateExecution("/tmp/x", { seed: 1, target: { bytes: 100e6 }, schema: 1 });
 */
export async function generateExecution(exec: string, opts: GenerateOptions): Promise<GenerateReport> {
  const t0 = performance.now();
  const profile = profileByName(opts.profile ?? "body-heavy");
  const schema = opts.schema ?? profile.schema;
  const l = layoutOf(exec);
  for (const p of [l.journal, l.dietedJournal, l.state]) {
    const st = await fsp.stat(p).catch(() => null);
    if (st) throw new JournalError("GENERATE_TARGET_EXISTS", `${p} already exists`, { path: p }, { hint: "generate into a new directory" });
  }
  await fsp.mkdir(l.eventsDir, { recursive: true });
  const idRng = createRng(opts.seed ^ 0x5eed);
  const startMs = 1772712164465 + (opts.seed % 1000) * 86_400_000;
  await fsp.writeFile(l.executionMeta, JSON.stringify(executionMeta(startMs, opts.seed), null, 2));
  if (schema === 1 || opts.profile !== undefined) {
    // The writer keeps an existing sidecar's eventSchemaVersion: declare it before the first append
    // (v2 is the writer's own default; a profile declares it explicitly, as today's runtime does).
    await fsp.writeFile(l.journal, "");
    await fsp.writeFile(l.sidecar, serializeSidecar({ schemaVersion: 1, eventSchemaVersion: schema, totalEvents: 0, byteLength: 0, lastEventId: null }));
  }
  const mode = opts.writer ?? ("bytes" in opts.target && opts.target.bytes <= ENGINE_MAX_BYTES ? "engine" : "direct");
  const random = (): number => idRng.next();
  const sink: StepSink = mode === "engine" ? await engineSink(exec, random) : directSink(exec, random, schema);
  let bytes = 0;
  let lines = 0;
  let transitions = 0;
  let lastAt = startMs;
  let nextProgress = PROGRESS_EVERY_BYTES;
  let batch: NewEvent[] = [];
  let beforeLast: string | null = null;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const list = batch;
    batch = [];
    bytes += await sink.events(list);
    lines += list.length;
  };
  const measure = { bytes: () => bytes, events: () => lines + batch.length };
  try {
    const steps = planExecution({ seed: opts.seed, target: opts.target, schema, profile, measure, startMs, execName: `generated-${opts.seed}` });
    for (const step of steps as Iterable<SimStep>) {
      lastAt = step.at;
      if (step.kind === "event") {
        batch.push({ id: makeEventId(step.at, idRng.next()), timestamp: iso(step.at), type: step.type, data: step.data });
        if (batch.length >= EVENT_BATCH_MAX) await flush();
        continue;
      }
      await flush();
      if (step.kind === "transition") {
        if (step.transition.type === "RunCompleted") beforeLast = serializeState(sink.state());
        bytes += await sink.transition(step.transition, step.at);
        lines += 1;
        transitions += 1;
      } else if (step.kind === "plan") {
        await sink.plan(step.plan, step.at);
        // An estimate (the line's id is made inside the sink); identical in both sinks.
        bytes += Buffer.byteLength(JSON.stringify(step.plan)) + 110;
        lines += 1;
      } else {
        const data: Record<string, unknown> = {
          completedCodons: completedCodonsOf(sink.state()), fileTree: [], totalCost: step.totalCost, totalTime: step.at - step.codonStartAt,
        };
        if (step.recentFileAccess) data.recentFileAccess = step.recentFileAccess;
        data.isRollingBack = false;
        batch.push({ id: makeEventId(step.at, idRng.next()), timestamp: iso(step.at), type: "state.snapshot", data });
        await flush();
      }
      if (opts.onProgress && bytes >= nextProgress) {
        opts.onProgress(bytes);
        nextProgress += PROGRESS_EVERY_BYTES;
      }
    }
    await flush();
  } finally {
    await sink.close();
  }
  // The runtime copies the previous state to .bak before each save: the state before the last transition.
  if (beforeLast !== null) await fsp.writeFile(l.stateBak, beforeLast);
  let tornBytes = 0;
  if (opts.torn) {
    const fragment = tornFragment(lastAt, idRng.next());
    await fsp.appendFile(l.journal, fragment);
    tornBytes = fragment.length;
  }
  const size = (await fsp.stat(l.journal)).size;
  return { exec: l.exec, bytes: size, lines, transitions, tornBytes, seconds: (performance.now() - t0) / 1000 };
}

/** An unterminated prefix of a plausible line (what a crash mid-write leaves). */
function tornFragment(ms: number, random: number): Buffer {
  const line = JSON.stringify({
    id: makeEventId(ms + 1, random), timestamp: iso(ms + 1), type: "tool.result",
    data: { codonId: "final-step-compress", toolUseId: "toolu_01torn", toolName: "Bash", result: "x".repeat(400), truncated: false },
  });
  return Buffer.from(line.slice(0, Math.floor(line.length * 0.6)), "utf8");
}

function executionMeta(startMs: number, seed: number): Record<string, unknown> {
  return {
    version: "1.1.0",
    readOnlySourceDataPath: "/home/agent/data/monorepo-task",
    readOnlySourceResolvedDataPath: "/home/agent/data/monorepo-task",
    dataHash: createRngHex(seed, 12),
    hankHash: createRngHex(seed + 1, 64),
    hankPath: "/home/agent/hanks/plan-gen/hank.json",
    linkType: "symlink",
    createdAt: iso(startMs - 2000),
    lastUsed: iso(startMs - 2000),
    hankweaveVersion: "0.5.6",
    environment: { invocationMethod: "node", platform: "linux", arch: "x64", osRelease: "6.8.0", runtime: "node v20.12.2" },
    generatedBy: { tool: "hankweave-journal generator", seed },
  };
}

function createRngHex(seed: number, n: number): string {
  return createRng(seed).hex(n);
}
