/**
 * Generator profiles: the knobs that make a journal body-heavy (today's v1 generator, the
 * compatible diet's stress input) or shaped like the reference runtime's own journals (calibrated
 * on conformance/plan-gen-execution, event schema v2). The simulation (runs, codons, the state
 * machine, sentinels, costs) is the same for both; the profile sets the tool mix, the result and
 * file sizes, how often `file.updated`/`filetree.updated`/snapshot bodies appear, and the text.
 */
import type { ToolName } from "./payloads.js";

export type ProfileName = "real" | "body-heavy";

/**
 * Bumped whenever a profile's output changes for a seed: the bench regenerates inputs whose
 * marker names another revision.
 */
export const GENERATOR_REVISION = 3;
export const PROFILE_NAMES: readonly ProfileName[] = ["real", "body-heavy"];

/** A log-normal size draw: median, sigma, clamp. */
export interface SizeDraw {
  median: number;
  sigma: number;
  min: number;
  max: number;
}

export interface GeneratorProfile {
  name: ProfileName;
  /** Event schema written by default (1: inline `file.updated.content`; 2: sha256/bytes/source). */
  schema: 1 | 2;
  /**
   * Text of the per-seed pools bodies are sliced from: "templates" (small vocabularies, very
   * compressible) or "zipf" (text-model.ts: Zipf vocabularies, compresses like real text).
   */
  text: "templates" | "zipf";
  /** Largest pool per body kind, characters ("zipf" pools; the templates' is 4 MiB). */
  poolMaxChars: number;
  /** Kind of each assistant block (text messages included), weights summing to 1. */
  blockMix: [ToolName | "message", number][];
  /** Result text limit per tool (the runtime keeps this many characters then `...`). */
  readLimit: number;
  bashLimit: number;
  /** Bash / Grep+Glob / WebFetch output sizes before truncation. */
  bashOut: SizeDraw;
  searchOut: SizeDraw;
  fetchOut: SizeDraw;
  /** Assistant prose size. */
  messageChars: SizeDraw;
  /** Files of the workspace (what Read reads, and what Edit edits). */
  fileSize: SizeDraw;
  /** Files written by Write (`toolInput.content`); undefined = `fileSize`. */
  writeSize?: SizeDraw;
  /** Chance that an Edit / a Write is followed by a `file.updated` line. */
  fileUpdatedAfterEdit: number;
  fileUpdatedAfterWrite: number;
  /** Chance that a `file.updated` is followed by a byte-identical repeat of a recent body. */
  bodyRepeat: number;
  /** Chance of a `filetree.updated` after an Edit / after a Write. */
  fileTreeAfterEdit: number;
  fileTreeAfterWrite: number;
  /** Chance that a completed codon's `state.snapshot` carries `recentFileAccess.content`. */
  snapshotFile: number;
  /** Token usage per block: independent draws, or a session whose prompt cache grows. */
  usage: "random" | "session";
}

/** Today's generator (unchanged bytes for a seed): inline bodies, 43.5% of them repeats. */
export const BODY_HEAVY: GeneratorProfile = {
  name: "body-heavy",
  schema: 1,
  text: "templates",
  poolMaxChars: 4 << 20,
  blockMix: [
    ["message", 0.28], ["Read", 0.28], ["Bash", 0.16], ["Edit", 0.11], ["Write", 0.06], ["TodoWrite", 0.05],
    ["Grep", 0.03], ["Glob", 0.02], ["WebFetch", 0.01],
  ],
  readLimit: 2500,
  bashLimit: 30000,
  bashOut: { median: 900, sigma: 1.4, min: 10, max: 120_000 },
  searchOut: { median: 700, sigma: 1.2, min: 20, max: 60_000 },
  fetchOut: { median: 3000, sigma: 1, min: 200, max: 80_000 },
  messageChars: { median: 450, sigma: 1, min: 40, max: 12000 },
  fileSize: { median: 6000, sigma: 1.25, min: 200, max: Infinity },
  fileUpdatedAfterEdit: 0.5,
  fileUpdatedAfterWrite: 0.6,
  bodyRepeat: 0.77,
  fileTreeAfterEdit: 0.2,
  fileTreeAfterWrite: 1,
  snapshotFile: 0.6,
  usage: "random",
};

/**
 * Calibrated on plan-gen-execution (6,467 lines, 697 B a line): its 1,273 assistant blocks are
 * 29% messages, 31% Read, 19% Bash, 7% Edit, 7% TodoWrite, 2% Write, 2% Grep, 1.5% Glob,
 * 0.5% WebFetch; every tool result is cut at 2,500 characters (Bash included; Read results
 * median 2,503, Bash median 260); Write contents median 11.7 KB (max 37 KB); messages median
 * 290 B; 6 `file.updated` for 121 Edit+Write; 1 of 17 snapshots with a file body.
 */
export const REAL: GeneratorProfile = {
  name: "real",
  schema: 2,
  text: "zipf",
  poolMaxChars: 8 << 20,
  blockMix: [
    ["message", 0.294], ["Read", 0.306], ["Bash", 0.194], ["Edit", 0.072], ["Write", 0.023], ["TodoWrite", 0.069],
    ["Grep", 0.018], ["Glob", 0.015], ["WebFetch", 0.009],
  ],
  readLimit: 2500,
  bashLimit: 2500,
  bashOut: { median: 300, sigma: 1.6, min: 5, max: 40_000 },
  searchOut: { median: 260, sigma: 1.4, min: 20, max: 20_000 },
  fetchOut: { median: 1500, sigma: 1, min: 200, max: 40_000 },
  messageChars: { median: 260, sigma: 1.1, min: 30, max: 6000 },
  fileSize: { median: 1800, sigma: 1.1, min: 100, max: 60_000 },
  writeSize: { median: 11_000, sigma: 0.6, min: 1500, max: 40_000 },
  fileUpdatedAfterEdit: 0.03,
  fileUpdatedAfterWrite: 0.12,
  bodyRepeat: 0.3,
  fileTreeAfterEdit: 0.02,
  fileTreeAfterWrite: 0.2,
  snapshotFile: 0.1,
  usage: "session",
};

/** The profile for a name. */
export function profileByName(name: ProfileName): GeneratorProfile {
  return name === "real" ? REAL : BODY_HEAVY;
}
