/**
 * `npm run bench`: generate (or reuse) inputs, run every operation's contenders alternately for
 * several rounds, and return rows of medians with throughput, ratio to the primary baseline, peak
 * RSS, output size and the target verdicts.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { generateExecution, type ProfileName } from "../generator/index.js";
import { GENERATOR_REVISION } from "../generator/profile.js";
import { compareProfiles, type ProfileSummary } from "./profile-compare.js";
import { ensureTools, machineInfo, measure, prepareRunner, REPO_ROOT, wholeProcessCli, type Measured, type Toolbox } from "./measure.js";
import { dietArgs, linkCopy, operations, type DietKind, type OpContext, type Operation } from "./operations.js";
import { evaluateTargets, type TargetVerdict } from "./targets.js";
import { fleetInput, fleetOperations, type FleetBenchSpec } from "./fleet.js";

export interface BenchOptions {
  /** Journal sizes to generate and measure, bytes. */
  sizes: number[];
  /** Generator profiles, each measured at every size (default: real). */
  profiles: ProfileName[];
  /** The fleet profile (`--profile fleet`): the two fleets to generate and measure, or null. */
  fleet: FleetBenchSpec | null;
  rounds: number;
  /** Only these operations (names or prefixes, e.g. "diet" matches both diets); null = all. */
  only: string[] | null;
  smoke: boolean;
  /** `--quick`: slow baselines (jq) run one round only. */
  quick: boolean;
  seed: number;
  /** Where inputs and scratch copies live (gitignored `.bench/`). */
  workDir: string;
  /** Re-measure the kept baselines (zstd -19) instead of reusing an earlier run's on the same input. */
  freshBaselines: boolean;
  /** Try `apt-get install` for missing tools. */
  install: boolean;
  /** Per-child timeout, ms. */
  timeoutMs: number;
  log: (line: string) => void;
}

/** One row of the table (one contender of one operation at one size). */
export interface BenchRow {
  /** A generator profile, or `fleet` for the fleet rows (fleet.ts). */
  profile: ProfileName | "fleet";
  sizeBytes: number;
  op: string;
  contender: string;
  role: "ours" | "baseline";
  status: "ok" | "n/a" | "failed";
  note: string | null;
  /** Median operation time over the rounds, ms (null unless ok). */
  medianMs: number | null;
  roundsMs: number[];
  /** MB/s of input journal (or events/s for appends), null unless ok. */
  throughput: number | null;
  throughputUnit: "MB/s" | "events/s";
  /** For ours: primary baseline time / ours (> 1 = faster); null when not comparable. */
  ratio: number | null;
  ratioTo: string | null;
  peakRssMB: number | null;
  outputBytes: number | null;
}

export interface BenchResult {
  startedAt: string;
  seconds: number;
  machine: Record<string, unknown>;
  /** How our children ran: the esbuild bundle (what the CLI bin runs) or the sources through tsx. */
  runner: "bundle" | "tsx";
  options: Omit<BenchOptions, "log">;
  missingTools: string[];
  inputs: { profile: BenchRow["profile"]; sizeBytes: number; exec: string; journalBytes: number; lines: number; generatedSeconds: number | null }[];
  rssFloorMB: number | null;
  rows: BenchRow[];
  targets: TargetVerdict[];
  /** Each input beside conformance/plan-gen-execution on the profile measures (issue 18 item 1). */
  profiles: ProfileSummary[];
}

/** Under --quick, contenders slower than this (first round, wall) run one round only. */
export const QUICK_REPEAT_MAX_MS = 15_000;
/** Without --quick, contenders slower than this (first round, wall) run one round only. */
export const REPEAT_MAX_MS = 120_000;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Which library entry points exist (so missing ones become "n/a" instead of crashes). */
async function probeLibraries(): Promise<Set<string>> {
  const have = new Set<string>();
  const probe = async (pkg: string, key: string, names: string[]): Promise<void> => {
    try {
      const m = (await import(pkg)) as Record<string, unknown>;
      for (const n of names) if (typeof m[n] === "function") have.add(`${key}.${n}`);
    } catch {
      /* the package does not load yet: everything from it is n/a */
    }
  };
  await probe("@hankweave-journal/journal", "journal", ["openJournalWriter"]);
  await probe("@hankweave-journal/diet", "diet", ["openReader", "applyDiet", "restoreJournal"]);
  return have;
}

async function registeredCommands(): Promise<Map<string, string>> {
  try {
    const { COMMANDS } = (await import("@hankweave-journal/cli")) as { COMMANDS: { name: string; help: string }[] };
    return new Map(COMMANDS.map((c) => [c.name, c.help]));
  } catch {
    return new Map();
  }
}

function countLines(path: string): number {
  const buf = readFileSync(path);
  let n = 0;
  for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, i + 1)) n += 1;
  return n;
}

/** The input's directory name: size, seed, profile (reused by later runs while the generator revision holds). */
export const inputName = (profile: ProfileName, size: number, seed: number): string => `gen-${size}-seed${seed}-${profile}`;

/** Generate the input for `size` (reused when a previous bench made it with the same seed, profile and generator revision). */
async function input(o: BenchOptions, profile: ProfileName, size: number): Promise<BenchResult["inputs"][number]> {
  const exec = join(o.workDir, "inputs", inputName(profile, size, o.seed));
  const marker = join(exec, "bench-input.json");
  if (existsSync(marker)) {
    const m = JSON.parse(readFileSync(marker, "utf8")) as { lines: number; revision?: number };
    if (m.revision === GENERATOR_REVISION) {
      return { profile, sizeBytes: size, exec, journalBytes: statSync(layoutOf(exec).journal).size, lines: m.lines, generatedSeconds: null };
    }
  }
  rmSync(exec, { recursive: true, force: true });
  rmSync(`${exec}.cache`, { recursive: true, force: true });
  o.log(`generating ${size} bytes (seed ${o.seed}, profile ${profile})…`);
  const r = await generateExecution(exec, { seed: o.seed, target: { bytes: size }, profile });
  writeFileSync(marker, JSON.stringify({ lines: r.lines, bytes: r.bytes, seed: o.seed, profile, revision: GENERATOR_REVISION }));
  return { profile, sizeBytes: size, exec, journalBytes: r.bytes, lines: r.lines, generatedSeconds: r.seconds };
}

/** One-off, untimed: the zstd -3 file the zstd -d baselines decompress. */
function prepareZstd(o: BenchOptions, exec: string, work: string, tools: Toolbox): string | null {
  if (!tools.zstd) return null;
  const zstdFile = join(work, "input.zst");
  if (!existsSync(zstdFile)) {
    const m = measure({ shell: `zstd -q -f -3 -T2 '${layoutOf(exec).journal}' -o '${zstdFile}'` }, tools, o.timeoutMs);
    if (m.exit !== 0) return null;
  }
  return zstdFile;
}

/**
 * The dieted copies restore and line N read, made on first use (untimed): a diet op's first round
 * output when it ran and succeeded, else a fresh diet of a hard-link copy.
 */
function dietedCopies(o: BenchOptions, exec: string, work: string, tools: Toolbox, ctx: Pick<OpContext, "commands" | "commandHelp">): OpContext["dieted"] {
  const made = new Map<DietKind, { exec: string } | { why: string }>();
  return (kind) => {
    const have = made.get(kind);
    if (have) return have;
    let res: { exec: string } | { why: string };
    const round0 = join(work, `diet-${kind}-0`);
    const args = dietArgs(ctx, kind);
    if (existsSync(layoutOf(round0).manifest)) res = { exec: round0 };
    else if (!args) res = { why: kind === "seekable" ? "diet --seekable not offered" : "diet not implemented" };
    else {
      const target = join(work, `dieted-${kind}`);
      linkCopy(exec, target);
      const m = measure({ runner: { op: "cli", argv: ["diet", target, ...args] } }, tools, o.timeoutMs);
      if (m.exit === 0 && existsSync(layoutOf(target).manifest)) res = { exec: target };
      else {
        o.log(`could not prepare a ${kind} diet: exit ${m.exit} ${JSON.stringify(m.detail ?? {}).slice(0, 300)}`);
        res = { why: `${kind} diet failed (exit ${m.exit})` };
      }
    }
    made.set(kind, res);
    return res;
  };
}

function selected(o: BenchOptions, op: string): boolean {
  return o.only === null || o.only.some((s) => op.startsWith(s));
}

/**
 * Run the bench. Guarantees: contenders of one operation alternate within each round; an
 * operation whose implementation is missing is a row with status "n/a", never a crash; scratch
 * copies are removed at the end (inputs are kept for reuse).
 */
export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  mkdirSync(o.workDir, { recursive: true });
  const { tools, missing } = ensureTools(o.install, o.log);
  for (const m of missing) o.log(`missing: ${m}`);
  const lib = await probeLibraries();
  const commands = await registeredCommands();
  const runner = await prepareRunner(o.log);
  const floor = measure({ runner: { op: "noop" } }, tools, o.timeoutMs);
  const rows: BenchRow[] = [];
  const inputs: BenchResult["inputs"] = [];
  for (const profile of o.profiles) for (const size of o.sizes) {
    const inp = await input(o, profile, size);
    inputs.push(inp);
    // Per run (pid): two benches running at once must not share or delete each other's scratch.
    const work = join(o.workDir, "work", `${profile}-${size}-${process.pid}`);
    mkdirSync(work, { recursive: true });
    const base = { commands: new Set(commands.keys()), commandHelp: commands };
    const ctx: OpContext = {
      exec: inp.exec, sizeBytes: size, journalBytes: inp.journalBytes, journalLines: inp.lines, profile,
      dieted: dietedCopies(o, inp.exec, work, tools, base), zstdFile: prepareZstd(o, inp.exec, work, tools),
      work, tools, smoke: o.smoke, cacheDir: `${inp.exec}.cache`, freshBaselines: o.freshBaselines, ...base, lib,
      cli: wholeProcessCli(),
    };
    for (const op of operations(ctx)) rows.push(...measureOperation(o, tools, op, profile, size, inp.journalBytes));
    rmSync(join(work), { recursive: true, force: true });
  }
  if (o.fleet) {
    const specs = [[o.fleet.small, o.fleet.smallBytes], [o.fleet.bigCount, o.fleet.bigBytes]] as const;
    for (const [count, bytesEach] of specs) {
      const fleet = await fleetInput(join(o.workDir, "inputs"), count, bytesEach, o.seed, o.log);
      inputs.push({ profile: "fleet", sizeBytes: fleet.journalBytes, exec: fleet.root, journalBytes: fleet.journalBytes, lines: 0, generatedSeconds: fleet.generatedSeconds });
      const work = join(o.workDir, "work", `fleet-${count}x${bytesEach}-${process.pid}`);
      mkdirSync(work, { recursive: true });
      const ops = fleetOperations({ fleet, work, tools, commands: new Set(commands.keys()), commandHelp: commands });
      for (const op of ops) rows.push(...measureOperation(o, tools, op, "fleet", fleet.journalBytes, fleet.journalBytes));
      rmSync(work, { recursive: true, force: true });
    }
  }
  const generated = inputs.filter((i): i is (typeof inputs)[number] & { profile: ProfileName } => i.profile !== "fleet");
  const profiles = compareProfiles({ inputs: generated, rows, workDir: o.workDir, tools, log: o.log });
  const result: BenchResult = {
    startedAt, seconds: (performance.now() - t0) / 1000, machine: machineInfo(), runner,
    options: {
      sizes: o.sizes, profiles: o.profiles, fleet: o.fleet, rounds: o.rounds, only: o.only, smoke: o.smoke, quick: o.quick, seed: o.seed, workDir: o.workDir,
      freshBaselines: o.freshBaselines, install: o.install, timeoutMs: o.timeoutMs,
    },
    missingTools: missing, inputs, rssFloorMB: floor.rssKB !== null ? floor.rssKB / 1024 : null, rows, targets: [], profiles,
  };
  result.targets = evaluateTargets(rows);
  return result;
}

/**
 * Measure one operation: its contenders alternate within each round, kept baselines are reused,
 * slow contenders run once; returns one row per contender (`inputBytes`: the throughput's input).
 * Used for every generator profile's input and for the fleets (fleet.ts).
 */
export function measureOperation(o: BenchOptions, tools: Toolbox, op: Operation, profile: BenchRow["profile"], size: number, inputBytes: number): BenchRow[] {
  if (!selected(o, op.op)) return [];
  const rows: BenchRow[] = [];
  op.setup?.();
  const runs = new Map<string, Measured[]>();
  const outputs = new Map<string, number[]>();
  const cachedNote = new Map<string, string>();
  for (const c of op.contenders) {
    const kept = c.unavailable ? null : c.cached?.() ?? null;
    if (!kept) continue;
    runs.set(c.name, [{ wallMs: kept.ms, opMs: kept.ms, rssKB: null, exit: 0, detail: { cached: kept }, stderr: "" }]);
    outputs.set(c.name, [kept.outputBytes]);
    cachedNote.set(c.name, `kept from ${kept.at} (load ${kept.loadAvg.split(" ").slice(0, 3).join(" ")}); --fresh-baselines re-measures`);
    o.log(`${profile} ${(size / 1e6).toFixed(1)} MB ${op.op} ${c.name}: kept ${kept.ms.toFixed(0)} ms from ${kept.at}`);
  }
  for (let round = 0; round < o.rounds; round++) {
    // Alternate: every contender once per round, in a rotating order.
    const order = op.contenders.map((_, i) => op.contenders[(i + round) % op.contenders.length]);
    for (const c of order) {
      if (c.unavailable || cachedNote.has(c.name) || ((c.oneRound || (o.quick && c.slow)) && round > 0)) continue;
      // A contender whose first round took longer than this is not repeated (keeps the full
      // bench near an hour at 1 GB and --quick near 5 minutes).
      const first = runs.get(c.name)?.[0];
      if (round > 0 && first && first.wallMs > (o.quick ? QUICK_REPEAT_MAX_MS : REPEAT_MAX_MS)) continue;
      const cmd = c.prepare(round);
      const m = measure(cmd, tools, o.timeoutMs);
      runs.set(c.name, [...(runs.get(c.name) ?? []), m]);
      const outBytes = c.outputBytes ? c.outputBytes(round) : null;
      if (outBytes !== null) outputs.set(c.name, [...(outputs.get(c.name) ?? []), outBytes]);
      if (m.exit === 0 && c.keep && outBytes) c.keep({ ms: m.opMs, outputBytes: outBytes, at: new Date().toISOString(), loadAvg: loadAvg() });
      o.log(`${profile} ${(size / 1e6).toFixed(1)} MB ${op.op} ${c.name} r${round}: ${m.exit === 0 ? `${m.opMs.toFixed(1)} ms` : `exit ${m.exit} ${m.stderr.trim().slice(0, 200)} ${JSON.stringify(m.detail ?? {}).slice(0, 300)}`}`);
    }
  }
  const primaryMs = (() => {
    const ms = runs.get(op.primary ?? "")?.filter((m) => m.exit === 0).map((m) => m.opMs) ?? [];
    return ms.length > 0 ? median(ms) : null;
  })();
  for (const c of op.contenders) {
    const ms = runs.get(c.name) ?? [];
    const ok = ms.filter((m) => m.exit === 0);
    const base = { profile, sizeBytes: size, op: op.op, contender: c.name, role: c.role, throughputUnit: (c.units === "events" ? "events/s" : "MB/s") as BenchRow["throughputUnit"] };
    if (c.unavailable || ms.length === 0) {
      rows.push({ ...base, status: "n/a", note: c.unavailable ?? "n/a", medianMs: null, roundsMs: [], throughput: null, ratio: null, ratioTo: null, peakRssMB: null, outputBytes: null });
      continue;
    }
    if (ok.length === 0) {
      const m = ms[0];
      rows.push({ ...base, status: "failed", note: `exit ${m.exit}: ${(m.stderr.trim() || JSON.stringify(m.detail ?? {})).slice(0, 160)}`, medianMs: null, roundsMs: [], throughput: null, ratio: null, ratioTo: null, peakRssMB: null, outputBytes: null });
      continue;
    }
    const med = median(ok.map((m) => m.opMs));
    let note = ok.length < ms.length ? `${ms.length - ok.length} round(s) failed` : cachedNote.get(c.name) ?? null;
    if (op.op === "rebuild" && c.role === "ours") {
      // The contenders must agree: ours prints state.json bytes, the naive fold hashes its own.
      const naive = runs.get("naive fold")?.find((m) => m.exit === 0)?.detail?.stateSha256;
      const mine = ok[0].detail?.stdoutSha256;
      if (naive && mine && naive !== mine) note = "state differs from the naive fold's!";
    }
    const events = ok[0].detail?.events as number | undefined;
    const throughput = c.units === "events" ? (events ?? 0) / (med / 1000) : inputBytes / 1e6 / (med / 1000);
    const rss = ok.map((m) => m.rssKB).filter((x): x is number => x !== null);
    const outs = outputs.get(c.name);
    rows.push({
      ...base, status: "ok", note, medianMs: med,
      roundsMs: ms.map((m) => m.opMs), throughput,
      ratio: c.role === "ours" && primaryMs !== null ? primaryMs / med : null, ratioTo: c.role === "ours" && primaryMs !== null ? op.primary : null,
      peakRssMB: rss.length > 0 ? Math.max(...rss) / 1024 : null, outputBytes: outs && outs.length > 0 ? median(outs) : null,
    });
  }
  return rows;
}

function loadAvg(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").trim();
  } catch {
    return "unknown";
  }
}

/** The default work directory (gitignored). */
export const DEFAULT_WORK_DIR = join(REPO_ROOT, ".bench");
