/**
 * The benchmarked operations: for each, our contender and its baselines, how to prepare a round
 * (untimed: fresh copies, hard links) and what it produced. Ours run through the real CLI when the
 * command is registered, else through the library in a child process; an operation whose
 * implementation has not landed is reported "n/a (not implemented)".
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
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
  /** Slow baseline: one round only under `--quick` (keeps it under 5 minutes). */
  slow?: boolean;
}

/** One operation with its contenders; `primary` names the baseline ratios are taken against. */
export interface Operation {
  op: string;
  description: string;
  contenders: Contender[];
  primary: string | null;
}

/** What every operation needs to know about the prepared inputs. */
export interface OpContext {
  /** Plain generated execution (read-only input). */
  exec: string;
  /** The requested input size (the generated journal is within a few KB of it). */
  sizeBytes: number;
  journalBytes: number;
  journalLines: number;
  /** A dieted copy (compatible), or null when diet is not implemented. */
  dietedExec: string | null;
  /** `zstd -3` output of the journal (for the zstd -d baseline), or null without zstd. */
  zstdFile: string | null;
  work: string;
  tools: Toolbox;
  smoke: boolean;
  /** zstd -19 only at or below this input size. */
  zstd19MaxBytes: number;
  /** Registered CLI command names. */
  commands: Set<string>;
  /** `--help` text of registered commands (to pick flag spellings). */
  commandHelp: Map<string, string>;
  /** Exported library functions that exist (by "package.fn"). */
  lib: Set<string>;
}

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

  // ---- diet (compatible and extended) against zstd
  const zstd19 = ctx.sizeBytes <= ctx.zstd19MaxBytes;
  const zstdRow = (level: 3 | 19): Contender => ({
    name: `zstd -${level} -T2`, role: "baseline", oneRound: level === 19,
    unavailable: !ctx.tools.zstd ? "n/a (zstd missing)" : level === 19 && !zstd19 ? (ctx.zstd19MaxBytes === 0 ? "n/a (skipped by --quick)" : `n/a (only at <= ${ctx.zstd19MaxBytes / 1e6} MB)`) : null,
    prepare: (round) => ({ shell: `zstd -q -f -${level} -T2 ${q(journal)} -o ${q(join(ctx.work, `z${level}-${round}.zst`))}` }),
    outputBytes: (round) => {
      const p = join(ctx.work, `z${level}-${round}.zst`);
      return existsSync(p) ? statSync(p).size : 0;
    },
  });
  for (const mode of ["compatible", "extended"] as const) {
    const dir = (round: number): string => join(ctx.work, `diet-${mode}-${round}`);
    const cmd = (round: number): Command | null =>
      ctx.commands.has("diet")
        ? { runner: { op: "cli", argv: ["diet", dir(round), ...(mode === "extended" ? extendedFlag(ctx) : [])] } }
        : ctx.lib.has("diet.applyDiet") ? { runner: { op: "diet", exec: dir(round), mode } } : null;
    ops.push({
      op: `diet-${mode}`,
      description: `${mode} diet (${mode === "compatible" ? "dietVersion 1, readable by the reference runtime" : "dietVersion 2"})`,
      primary: mode === "compatible" ? "zstd -3 -T2" : "zstd -19 -T2",
      contenders: [
        {
          name: "ours", role: "ours", unavailable: cmd(0) ? null : NOT_IMPLEMENTED,
          prepare: (round) => {
            linkCopy(ctx.exec, dir(round));
            return cmd(round) as Command;
          },
          outputBytes: (round) => dietedBytes(dir(round)),
        },
        // zstd -19 is measured once, beside the extended diet (its target), not twice.
        mode === "compatible" ? zstdRow(3) : zstdRow(19),
      ],
    });
  }

  // ---- restore
  const rdir = (round: number): string => join(ctx.work, `restore-${round}`);
  const restoreCmd = (round: number): Command | null =>
    ctx.commands.has("restore") ? { runner: { op: "cli", argv: ["restore", rdir(round)] } }
      : ctx.lib.has("diet.restoreJournal") ? { runner: { op: "restore", exec: rdir(round) } } : null;
  ops.push({
    op: "restore",
    description: "restore events.jsonl from a compatible diet",
    primary: "zstd -d",
    contenders: [
      {
        name: "ours", role: "ours",
        unavailable: !ctx.dietedExec ? NOT_IMPLEMENTED : restoreCmd(0) ? null : NOT_IMPLEMENTED,
        prepare: (round) => {
          linkCopy(ctx.dietedExec as string, rdir(round));
          return restoreCmd(round) as Command;
        },
      },
      {
        name: "zstd -d", role: "baseline", unavailable: ctx.zstdFile ? null : "n/a (zstd missing)",
        prepare: (round) => ({ shell: `zstd -q -f -d ${q(ctx.zstdFile as string)} -o ${q(join(ctx.work, `unz-${round}.jsonl`))}` }),
      },
      {
        // The same durability as restore, which fsyncs before link(): zstd -d alone returns while
        // its output is still only in the page cache.
        name: "zstd -d + fsync", role: "baseline", unavailable: ctx.zstdFile ? null : "n/a (zstd missing)",
        prepare: (round) => {
          const out = q(join(ctx.work, `unz-sync-${round}.jsonl`));
          return { shell: `zstd -q -f -d ${q(ctx.zstdFile as string)} -o ${out} && sync ${out}` };
        },
      },
    ],
  });

  // ---- read one line by number (the middle one)
  const mid = Math.max(0, Math.floor(ctx.journalLines / 2));
  ops.push({
    op: "line-n",
    description: `open + read line ${mid} (plain and dieted)`,
    primary: "awk NR==N",
    contenders: [
      { name: "ours (plain)", role: "ours", unavailable: ctx.lib.has("diet.openReader") ? null : NOT_IMPLEMENTED, prepare: () => ({ runner: { op: "line", exec: ctx.exec, line: mid } }) },
      {
        name: "ours (dieted)", role: "ours", unavailable: ctx.dietedExec && ctx.lib.has("diet.openReader") ? null : NOT_IMPLEMENTED,
        prepare: () => ({ runner: { op: "line", exec: ctx.dietedExec as string, line: mid } }),
      },
      { name: "awk NR==N", role: "baseline", unavailable: need(ctx.tools.awk, "awk"), prepare: () => ({ shell: `awk 'NR==${mid + 1}{print; exit}' ${q(journal)} >/dev/null` }) },
    ],
  });
  return ops;
}
