/**
 * The benchmarked operations: for each, our contender and its baselines, how to prepare a round
 * (untimed: fresh copies, hard links) and what it produced. Ours run through the real CLI when the
 * command is registered, else through the library in a child process; an operation whose
 * implementation has not landed is reported "n/a (not implemented)".
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import type { Command, Toolbox } from "./measure.js";

/** One contender of an operation. */
export interface Contender {
  name: string;
  role: "ours" | "baseline";
  /** Null when runnable, else why not (shown as the row's status). */
  unavailable: string | null;
  /** Untimed preparation before each round; returns the command to time. */
  prepare(round: number): Command;
  /** Bytes produced (diet outputs), measured after the round. */
  outputBytes?(round: number): number;
  /** Units processed per run, for the throughput column (default: input bytes). */
  units?: "bytes" | "events";
  /** Skip all but the first round (very slow baselines). */
  oneRound?: boolean;
  /**
   * A measurement kept from an earlier run on the same input (zstd -19 at 1 GB takes minutes):
   * when it returns one, the contender is not run and its row says "cached <date>".
   */
  cached?(): CachedMeasure | null;
  /** Called with the first successful measurement (to keep it for `cached`). */
  keep?(m: CachedMeasure): void;
  /** Slow baseline: one round only under `--quick` (keeps it under 5 minutes). */
  slow?: boolean;
}

/** A kept measurement of a deterministic baseline on one input. */
export interface CachedMeasure {
  ms: number;
  outputBytes: number;
  /** When it was measured (ISO time) and the machine load then. */
  at: string;
  loadAvg: string;
}

/** One operation with its contenders; `primary` names the baseline ratios are taken against. */
export interface Operation {
  op: string;
  description: string;
  contenders: Contender[];
  primary: string | null;
  /** Untimed, once before the rounds (e.g. make the dieted copies a row reads); may mark contenders unavailable. */
  setup?(): void;
}

/** The dieted copies restore and line N read: compatible (one frame), seekable, extended. */
export type DietKind = "compatible" | "seekable" | "extended";

/** What every operation needs to know about the prepared inputs. */
export interface OpContext {
  /** Plain generated execution (read-only input). */
  exec: string;
  /** The requested input size (the generated journal is within a few KB of it). */
  sizeBytes: number;
  journalBytes: number;
  journalLines: number;
  /**
   * A dieted copy of the input of that kind (made on first use, untimed; a diet round's own
   * output when that op ran), or null with why not.
   */
  dieted(kind: DietKind): { exec: string } | { why: string };
  /** Generator profile of the input. */
  profile: string;
  /** `zstd -3` output of the journal (for the zstd -d baseline), or null without zstd. */
  zstdFile: string | null;
  work: string;
  tools: Toolbox;
  smoke: boolean;
  /** Where kept baseline measurements of this input live (one JSON file per baseline name). */
  cacheDir: string;
  /** Re-measure baselines even when kept (`--fresh-baselines`). */
  freshBaselines: boolean;
  /** Registered CLI command names. */
  commands: Set<string>;
  /** `--help` text of registered commands (to pick flag spellings). */
  commandHelp: Map<string, string>;
  /** Exported library functions that exist (by "package.fn"). */
  lib: Set<string>;
  /**
   * The CLI started as a process of its own (`node <bin>`, the installed bin's code bundled), for
   * the whole-process rows, or null/absent when it was not built (those rows are then n/a).
   */
  cli?: string[] | null;
}

/** Suffix of the report-only rows that time the CLI as a whole process (node start-up included). */
export const WHOLE_PROCESS = "whole process";

const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;

/** Total bytes of regular files under `dir` (0 when absent). */
export function treeBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? treeBytes(p) : statSync(p).size;
  }
  return n;
}

/** Bytes a diet left on disk: pointer journal + manifest + CAS. */
function dietedBytes(exec: string): number {
  const l = layoutOf(exec);
  const size = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
  return size(l.dietedJournal) + size(l.manifest) + treeBytes(l.casDir);
}

/** `cp -al` (hard-link copy: instant, and safe because diet/restore never modify files in place). */
export function linkCopy(src: string, dst: string): void {
  rmSync(dst, { recursive: true, force: true });
  mkdirSync(join(dst, ".."), { recursive: true });
  const r = spawnSync("cp", ["-al", src, dst]);
  if (r.status !== 0) throw new Error(`cp -al ${src} ${dst} failed: ${r.stderr}`);
}

function cliOr(ctx: OpContext, command: string, argv: string[], libKey: string, lib: Command): Command | null {
  if (ctx.commands.has(command)) return { runner: { op: "cli", argv } };
  if (ctx.lib.has(libKey)) return lib;
  return null;
}

const NOT_IMPLEMENTED = "n/a (not implemented)";

/** The diet command's spelling for the extended mode, read from its help text. */
function extendedFlag(ctx: OpContext): string[] {
  const help = ctx.commandHelp.get("diet") ?? "";
  if (help.includes("--bodies")) return ["--bodies", "extended"];
  if (help.includes("--mode")) return ["--mode", "extended"];
  return ["--extended"];
}

/** `diet` arguments for a kind, or null when the command does not offer it (read from its help). */
export function dietArgs(ctx: Pick<OpContext, "commandHelp" | "commands">, kind: DietKind): string[] | null {
  if (!ctx.commands.has("diet")) return null;
  if (kind === "compatible") return [];
  if (kind === "seekable") return (ctx.commandHelp.get("diet") ?? "").includes("--seekable") ? ["--seekable"] : null;
  return extendedFlag(ctx as OpContext);
}

const cacheFile = (ctx: OpContext, name: string): string => join(ctx.cacheDir, `${name.replace(/[^a-z0-9]+/gi, "_")}.json`);

/** A kept measurement (null when absent, unreadable or `--fresh-baselines`). */
function readCached(ctx: OpContext, name: string): CachedMeasure | null {
  if (ctx.freshBaselines) return null;
  try {
    const m = JSON.parse(readFileSync(cacheFile(ctx, name), "utf8")) as CachedMeasure;
    return typeof m.ms === "number" && typeof m.outputBytes === "number" && m.outputBytes > 0 ? m : null;
  } catch {
    return null;
  }
}

function writeCached(ctx: OpContext, name: string, m: CachedMeasure): void {
  mkdirSync(ctx.cacheDir, { recursive: true });
  writeFileSync(cacheFile(ctx, name), `${JSON.stringify(m)}\n`);
}

/** All operations, in table order. */
export function operations(ctx: OpContext): Operation[] {
  const l = layoutOf(ctx.exec);
  const journal = l.journal;
  const ops: Operation[] = [];
  const need = (ok: boolean, what: string): string | null => (ok ? null : `n/a (${what} missing)`);

  // ---- append under each durability policy
  for (const durability of ["none", "batch", "every"] as const) {
    const count = durability === "every" ? (ctx.smoke ? 50 : 2000) : ctx.smoke ? 500 : 1_000_000;
    ops.push({
      op: `append-${durability}`,
      description: `append events (durability ${durability}; ${durability === "every" ? `${count} events` : "up to 64 MB of events"})`,
      primary: "raw write",
      contenders: [
        {
          name: "ours", role: "ours", units: "events",
          unavailable: ctx.lib.has("journal.openJournalWriter") ? null : NOT_IMPLEMENTED,
          prepare: (round) => {
            const dir = join(ctx.work, `append-${durability}-${round}`);
            rmSync(dir, { recursive: true, force: true });
            mkdirSync(dir, { recursive: true });
            return { runner: { op: "append", exec: dir, source: journal, durability, count } };
          },
        },
        {
          name: "raw write", role: "baseline", units: "events", unavailable: null,
          prepare: (round) => {
            const file = join(ctx.work, `raw-append-${durability}-${round}.jsonl`);
            rmSync(file, { force: true });
            mkdirSync(ctx.work, { recursive: true });
            return { runner: { op: "raw-append", file, source: journal, fsync: durability === "every", count } };
          },
        },
      ],
    });
  }

  // ---- read everything
  ops.push({
    op: "read",
    description: "read and parse every event",
    primary: "jq -c .",
    contenders: [
      { name: "ours", role: "ours", unavailable: ctx.lib.has("diet.openReader") ? null : NOT_IMPLEMENTED, prepare: () => ({ runner: { op: "read", exec: ctx.exec } }) },
      { name: "wc -l", role: "baseline", unavailable: need(ctx.tools.wc, "wc"), prepare: () => ({ shell: `wc -l ${q(journal)} >/dev/null` }) },
      { name: "jq -c .", role: "baseline", slow: true, unavailable: need(ctx.tools.jq, "jq"), prepare: () => ({ shell: `jq -c . ${q(journal)} >/dev/null` }) },
    ],
  });

  // ---- rebuild state.json from the journal
  const rebuild = cliOr(ctx, "rebuild", ["rebuild", ctx.exec, "--stdout"], "", { shell: "false" });
  ops.push({
    op: "rebuild",
    description: "fold the journal into state.json",
    primary: "naive fold",
    contenders: [
      { name: "ours", role: "ours", unavailable: rebuild ? null : NOT_IMPLEMENTED, prepare: () => rebuild as Command },
      { name: "naive fold", role: "baseline", unavailable: null, prepare: () => ({ runner: { op: "naive-fold", journal } }) },
      {
        name: "jq | fold", role: "baseline", slow: true, unavailable: need(ctx.tools.jq, "jq"),
        prepare: () => ({
          shell: `jq -c 'select(.type=="state.transition")' ${q(journal)} | node --import tsx tools/src/bench/runner.ts '{"op":"fold-stdin"}' >/dev/null`,
        }),
      },
    ],
  });

  // ---- audit and verify (no external baseline: the naive fold is the reference cost of one full pass)
  const audit = cliOr(ctx, "audit", ["audit", ctx.exec, "--json"], "", { shell: "false" });
  ops.push({
    op: "audit",
    description: "audit every transition (rows + findings)",
    primary: "naive fold",
    contenders: [
      { name: "ours", role: "ours", unavailable: audit ? null : NOT_IMPLEMENTED, prepare: () => audit as Command },
      { name: "naive fold", role: "baseline", unavailable: null, prepare: () => ({ runner: { op: "naive-fold", journal } }) },
    ],
  });
  const verify = cliOr(ctx, "verify", ["verify", ctx.exec, "--json"], "", { shell: "false" });
  ops.push({
    op: "verify",
    description: "verify sidecar, lines, fold vs state.json",
    primary: "naive fold",
    contenders: [
      { name: "ours", role: "ours", unavailable: verify ? null : NOT_IMPLEMENTED, prepare: () => verify as Command },
      { name: "naive fold", role: "baseline", unavailable: null, prepare: () => ({ runner: { op: "naive-fold", journal } }) },
    ],
  });

  // ---- SQLite index
  // Each round indexes a hard-link copy: the index file is written beside the journal, and the
  // generated input stays read-only (a rename in the copy never touches the input's files).
  const idir = (round: number): string => join(ctx.work, `index-${round}`);
  const index = (round: number): Command | null => cliOr(ctx, "index", ["index", idir(round), "--full"], "", { shell: "false" });
  ops.push({
    op: "index",
    description: "build the SQLite index of events and transitions",
    primary: "sqlite bulk insert",
    contenders: [
      {
        name: "ours", role: "ours", unavailable: index(0) ? null : NOT_IMPLEMENTED,
        prepare: (round) => {
          linkCopy(ctx.exec, idir(round));
          return index(round) as Command;
        },
      },
      {
        name: "sqlite bulk insert", role: "baseline", unavailable: null,
        prepare: (round) => ({ runner: { op: "sqlite-naive", journal, db: join(ctx.work, `naive-${round}.sqlite`) } }),
      },
    ],
  });

  // ---- diet (compatible one frame, seekable, extended) against zstd
  const zstdRow = (level: 3 | 19): Contender => {
    const name = `zstd -${level} -T2`;
    return {
      name, role: "baseline", oneRound: level === 19,
      unavailable: !ctx.tools.zstd ? "n/a (zstd missing)" : null,
      prepare: (round) => ({ shell: `zstd -q -f -${level} -T2 ${q(journal)} -o ${q(join(ctx.work, `z${level}-${round}.zst`))}` }),
      outputBytes: (round) => {
        const p = join(ctx.work, `z${level}-${round}.zst`);
        return existsSync(p) ? statSync(p).size : 0;
      },
      // zstd -19 takes minutes at 1 GB and its output is a function of the input: measured once per input.
      ...(level === 19 ? { cached: () => readCached(ctx, name), keep: (m: CachedMeasure) => writeCached(ctx, name, m) } : {}),
    };
  };
  const dietOp = (kind: DietKind): Operation => {
    const dir = (round: number): string => join(ctx.work, `diet-${kind}-${round}`);
    const args = dietArgs(ctx, kind);
    const cmd = (round: number): Command | null =>
      args ? { runner: { op: "cli", argv: ["diet", dir(round), ...args] } }
        : kind !== "seekable" && ctx.lib.has("diet.applyDiet") && !ctx.commands.has("diet") ? { runner: { op: "diet", exec: dir(round), mode: kind } } : null;
    return {
      op: `diet-${kind}`,
      description: kind === "compatible" ? "compatible diet (dietVersion 1, one zstd frame: every reference runtime reads it)"
        : kind === "seekable" ? "compatible diet, seekable frames (`diet --seekable`; Node ≥ 24 and Bun read it, not Node 22)"
        : "extended diet (dietVersion 2)",
      primary: kind === "extended" ? "zstd -19 -T2" : "zstd -3 -T2",
      contenders: [
        {
          name: "ours", role: "ours", unavailable: cmd(0) ? null : kind === "seekable" ? "n/a (diet --seekable not offered)" : NOT_IMPLEMENTED,
          prepare: (round) => {
            linkCopy(ctx.exec, dir(round));
            return cmd(round) as Command;
          },
          outputBytes: (round) => dietedBytes(dir(round)),
        },
        // zstd -3 beside both compatible kinds (it is cheap), zstd -19 once, beside the extended diet.
        ...(kind === "extended" ? [zstdRow(19)] : [zstdRow(3)]),
      ],
    };
  };
  ops.push(dietOp("compatible"), dietOp("seekable"), dietOp("extended"));

  // ---- restore (from each kind of diet)
  const rdir = (kind: DietKind, round: number): string => join(ctx.work, `restore-${kind}-${round}`);
  const restoreCmd = (kind: DietKind, round: number): Command | null =>
    ctx.commands.has("restore") ? { runner: { op: "cli", argv: ["restore", rdir(kind, round)] } }
      : ctx.lib.has("diet.restoreJournal") ? { runner: { op: "restore", exec: rdir(kind, round) } } : null;
  const restoreFrom = (kind: DietKind): Contender => {
    const c: Contender = {
      name: `ours (${kind})`, role: "ours",
      unavailable: restoreCmd(kind, 0) ? null : NOT_IMPLEMENTED,
      prepare: (round) => {
        const src = ctx.dieted(kind);
        linkCopy((src as { exec: string }).exec, rdir(kind, round));
        return restoreCmd(kind, round) as Command;
      },
    };
    return c;
  };
  const restoreOurs = (["compatible", "seekable", "extended"] as const).map(restoreFrom);
  // What a user waits for: `hankweave-journal restore` as a process of its own, timed by the
  // parent like the zstd baselines (node's start-up and the bundle's loading included).
  const restoreWhole = (["compatible", "extended"] as const).map((kind): Contender => ({
    name: `ours (${kind}), ${WHOLE_PROCESS}`, role: "ours",
    unavailable: !ctx.commands.has("restore") ? NOT_IMPLEMENTED : ctx.cli ? null : "n/a (CLI bundle not built)",
    prepare: (round) => {
      const d = join(ctx.work, `restore-whole-${kind}-${round}`);
      linkCopy((ctx.dieted(kind) as { exec: string }).exec, d);
      return { shell: `${(ctx.cli as string[]).map(q).join(" ")} restore ${q(d)} >/dev/null` };
    },
  }));
  ops.push({
    op: "restore",
    description: "restore events.jsonl from each diet (fsyncs before it publishes)",
    primary: "zstd -d + fsync",
    setup: () => {
      for (const [i, kind] of (["compatible", "seekable", "extended"] as const).entries()) {
        if (restoreOurs[i].unavailable) continue;
        const d = ctx.dieted(kind);
        if ("why" in d) restoreOurs[i].unavailable = `n/a (${d.why})`;
      }
      for (const [i, kind] of (["compatible", "extended"] as const).entries()) {
        if (restoreWhole[i].unavailable) continue;
        const d = ctx.dieted(kind);
        if ("why" in d) restoreWhole[i].unavailable = `n/a (${d.why})`;
      }
    },
    contenders: [
      ...restoreOurs,
      ...restoreWhole,
      {
        name: "zstd -d", role: "baseline", unavailable: ctx.zstdFile ? null : "n/a (zstd missing)",
        prepare: (round) => ({ shell: `zstd -q -f -d ${q(ctx.zstdFile as string)} -o ${q(join(ctx.work, `unz-${round}.jsonl`))}` }),
      },
      {
        // The same durability as restore, which fsyncs before link() (format §6): zstd -d alone
        // returns while its output is still only in the page cache.
        name: "zstd -d + fsync", role: "baseline", unavailable: ctx.zstdFile ? null : "n/a (zstd missing)",
        prepare: (round) => {
          const out = q(join(ctx.work, `unz-sync-${round}.jsonl`));
          return { shell: `zstd -q -f -d ${q(ctx.zstdFile as string)} -o ${out} && sync ${out}` };
        },
      },
    ],
  });

  // ---- read one line by number (the middle one), in a fresh process: reader, and `cat --from-line`
  const mid = Math.max(0, Math.floor(ctx.journalLines / 2));
  const lineOf = (kind: DietKind | "plain", how: "reader" | "cat"): Contender => ({
    name: `ours (${kind})`, role: "ours",
    unavailable: how === "reader" ? (ctx.lib.has("diet.openReader") ? null : NOT_IMPLEMENTED) : ctx.commands.has("cat") ? null : NOT_IMPLEMENTED,
    prepare: () => {
      const exec = kind === "plain" ? ctx.exec : (ctx.dieted(kind) as { exec: string }).exec;
      return how === "reader"
        ? { runner: { op: "line", exec, line: mid } }
        : { runner: { op: "cli", argv: ["cat", exec, "--from-line", String(mid), "--to-line", String(mid)] } };
    },
  });
  // `hankweave-journal cat --from-line N --to-line N` on the extended diet as a process of its own:
  // what a person at a terminal waits for, node's start-up included (report only).
  const catWhole: Contender = {
    name: `ours (extended), ${WHOLE_PROCESS}`, role: "ours",
    unavailable: !ctx.commands.has("cat") ? NOT_IMPLEMENTED : ctx.cli ? null : "n/a (CLI bundle not built)",
    prepare: () => {
      const exec = (ctx.dieted("extended") as { exec: string }).exec;
      return { shell: `${(ctx.cli as string[]).map(q).join(" ")} cat ${q(exec)} --from-line ${mid} --to-line ${mid} >/dev/null` };
    },
  };
  for (const how of ["reader", "cat"] as const) {
    const ours = (["plain", "compatible", "seekable", "extended"] as const).map((k) => lineOf(k, how));
    if (how === "cat") ours.push(catWhole);
    ops.push({
      op: how === "reader" ? "line-n" : "cat-line",
      description: how === "reader" ? `open + read line ${mid} through the reader (plain and each diet)` : `cat --from-line ${mid} --to-line ${mid} (plain and each diet)`,
      primary: "awk NR==N",
      setup: () => {
        for (const [i, kind] of (["plain", "compatible", "seekable", "extended", "extended"] as const).entries()) {
          if (kind === "plain" || !ours[i] || ours[i].unavailable) continue;
          const d = ctx.dieted(kind);
          if ("why" in d) ours[i].unavailable = `n/a (${d.why})`;
        }
      },
      contenders: [
        ...ours,
        { name: "awk NR==N", role: "baseline", unavailable: need(ctx.tools.awk, "awk"), prepare: () => ({ shell: `awk 'NR==${mid + 1}{print; exit}' ${q(journal)} >/dev/null` }) },
      ],
    });
  }
  return ops;
}
