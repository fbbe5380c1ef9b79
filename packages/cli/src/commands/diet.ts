/**
 * `hankweave-journal diet <exec>` (also `--diet-journal <exec>`): move large bodies to the CAS and
 * compress the journal into one zstd frame (or, `--seekable`, independent frames and a seek table)
 * + manifest (format §5). `--dry-run` prints
 * the plan and changes nothing.
 */
import { statSync } from "node:fs";
import { JournalError, isJournalError, type ExecLayout } from "@hankweave-journal/core";
import { CAS_ZSTD_LEVEL } from "@hankweave-journal/cas";
import { DIET_KINDS, applyDiet, isDietKind, planDiet, type DietKind, type DietPlan, type DietResult } from "@hankweave-journal/diet";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";
import { BATCH_HELP, BATCH_OPTIONS, batchFlags, runBatchCommand, type BatchFlags } from "./fleet-batch.js";

export interface DietArgs {
  /** The execution (undefined with --all). */
  exec: string;
  /** `--all <root>`: the batch form (fleet-batch.ts), else null. */
  all: BatchFlags | null;
  dryRun: boolean;
  json: boolean;
  force: boolean;
  kind: DietKind;
  level: number | undefined;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

function planText(p: DietPlan): string {
  const lines = [
    `plan for ${p.exec} (${p.kind}, dietVersion ${p.dietVersion})`,
    `journal: ${p.originalBytes} bytes, ${p.lines} lines, sha256 ${p.originalSha256}`,
    `last run: ${p.lastRun} (${p.runCheck === "refused" ? "the diet would refuse: use --force" : p.runCheck})`,
    `bodies to move: ${p.bodies.moved} (${p.bodies.unique} unique, ${p.bodies.uniqueBytes} bytes to store once)`,
    `pointer journal: ${p.expectedPointerBytes} bytes before compression, ${p.frames} frames`,
  ];
  for (const m of p.moves) lines.push(`  line ${m.line} ${m.key}: ${m.bytes} bytes sha256 ${m.sha256}${m.firstSeen ? "" : " (repeat)"}`);
  if (p.movesTruncated) lines.push(`  … ${p.bodies.moved - p.moves.length} more`);
  return lines.join("\n") + "\n";
}

/** Bytes of the SQLite index (a derived file the directory also stores), 0 when absent. */
function indexBytesOf(layout: ExecLayout): number {
  try {
    return statSync(layout.index).size;
  } catch {
    return 0;
  }
}

/** The result with the index counted in what the directory stores. */
function withIndex(r: DietResult, layout: ExecLayout): DietResult & { stored: DietResult["stored"] & { indexBytes: number } } {
  const indexBytes = indexBytesOf(layout);
  return { ...r, stored: { ...r.stored, indexBytes, totalBytes: r.stored.totalBytes + indexBytes } };
}

function resultText(r: ReturnType<typeof withIndex>): string {
  return [
    `${r.status} ${r.exec} (${r.kind}, dietVersion ${r.dietVersion}, verified)`,
    `original: ${r.originalBytes} bytes (${mib(r.originalBytes)}), sha256 ${r.originalSha256}`,
    `stored: ${r.stored.totalBytes} bytes (${mib(r.stored.totalBytes)}) = pointer journal ${r.stored.pointerJournalBytes} + CAS ${r.stored.casBytes} + manifest ${r.stored.manifestBytes}${r.stored.indexBytes > 0 ? ` + index ${r.stored.indexBytes}` : ""}`,
    `bodies: ${r.bodies.moved} moved, ${r.bodies.unique} unique (${r.bodies.written} written, ${r.bodies.reused} reused)`,
  ].join("\n") + "\n";
}

/**
 * The diet kind from `--kind`, or its aliases `--seekable` (= seekable) and `--bodies B`
 * (= B, compatible or extended); USAGE when they name different kinds or an unknown one.
 */
function kindOfArgs(kind: string | undefined, seekable: boolean, bodies: string | undefined): DietKind {
  if (kind !== undefined && !isDietKind(kind)) throw new JournalError("USAGE", `--kind expects ${DIET_KINDS.join(", ")}, got ${JSON.stringify(kind)}`);
  if (bodies !== undefined && bodies !== "compatible" && bodies !== "extended") {
    throw new JournalError("USAGE", `--bodies expects compatible or extended, got ${JSON.stringify(bodies)}`);
  }
  const asked: [string, DietKind][] = [];
  if (kind !== undefined) asked.push([`--kind ${kind}`, kind]);
  if (seekable) asked.push(["--seekable", "seekable"]);
  if (bodies !== undefined) asked.push([`--bodies ${bodies}`, bodies]);
  const other = asked.find(([, k]) => k !== asked[0][1]);
  if (other !== undefined) throw new JournalError("USAGE", `${asked[0][0]} and ${other[0]} ask for different diet kinds`);
  return asked[0]?.[1] ?? "compatible";
}

export const dietCommand: Command<DietArgs> = {
  name: "diet",
  summary: "shrink a finished journal: bodies to the CAS, the rest one zstd frame (--dry-run)",
  help: `usage: hankweave-journal diet <exec> [--dry-run] [--json] [--force] [--kind compatible|seekable|extended]
                                [--level N] [--seekable] [--bodies compatible|extended]
       hankweave-journal --diet-journal <exec>   (the reference runtime's spelling)
       hankweave-journal diet --all <root> [--jobs N] [--status S] [--finished-before D] [--dry-run] [--json]

Moves file bodies of 4,096 bytes or more to events/cas/<sha[0:2]>/<sha>.zst (stored once), writes
events/events.jsonl.zst (one zstd frame, as the reference runtime writes it) and events/journal.meta.json,
verifies both from disk, then deletes events.jsonl and events.meta.json. Every tool keeps reading
the directory transparently; \`restore\` gives the original bytes back.

Requires runtime.lock to be absent or provably stale (LOCK_HELD otherwise, never overridden) and
the last run to have ended completed or failed (RUN_NOT_FINISHED otherwise).

  --dry-run          print the plan (bodies to move, expected sizes); change nothing, take no lock;
                     on a dieted directory: say that diet would re-verify it
  --json             print one JSON object {ok, dryRun, plan | result}
  --force            diet even when the last run did not finish (the lock is still required)
  --kind KIND        what to write (default compatible):
                     compatible  dietVersion 1, file.updated and state.snapshot bodies to the CAS,
                                 the rest one zstd frame: every reference runtime reads it
                     seekable    dietVersion 1, same bodies, events.jsonl.zst as independent frames
                                 + a seek table. Read by the reference runtime on Node >= 24 and Bun,
                                 NOT on Node 22 (its node:zlib decodes only the first frame: it would
                                 see a prefix of the journal). Our tools read both.
                     extended    dietVersion 2, our own container (also assistant.action, tool.result,
                                 sentinel.output bodies, deduplicated). The reference runtime CANNOT
                                 read an extended diet: restore the directory before handing it back.
  --seekable         the same as --kind seekable
  --bodies B         the same as --kind B, for B = compatible or extended (the older spelling)
  --level N          zstd level of the CAS bodies (1–19; default ${CAS_ZSTD_LEVEL}, chosen by measurement:
                     see docs/diet.md). The reference runtime reads any level.
${BATCH_HELP}

Examples:
  hankweave-journal diet ./runs/x --dry-run
  hankweave-journal diet ./runs/x --json
  hankweave-journal diet ./runs/x --level 19 --kind seekable
  hankweave-journal diet ./runs/x --force --kind extended
  hankweave-journal diet ./runs/x --seekable              (the same as --kind seekable)
  hankweave-journal diet ./runs/x --bodies extended       (the same as --kind extended)
  hankweave-journal diet --all ./runs --jobs 2 --status completed,failed --finished-before 7d --max-depth 8

Exit codes: 0 dieted (or already dieted, re-verified), 1 refused or failed (nothing lost), 2 usage.`,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      "dry-run": { type: "boolean" }, json: { type: "boolean" }, force: { type: "boolean" }, bodies: { type: "string" },
      kind: { type: "string" }, level: { type: "string" }, seekable: { type: "boolean" }, ...BATCH_OPTIONS,
    }, { min: 0, max: 1 });
    const all = batchFlags(p);
    const levelText = p.values.level as string | undefined;
    const level = levelText === undefined ? undefined : Number(levelText);
    if (level !== undefined && !(Number.isInteger(level) && level >= 1 && level <= 19 && /^\d+$/.test(levelText!))) {
      throw new JournalError("USAGE", `--level expects an integer from 1 to 19, got ${JSON.stringify(levelText)}`);
    }
    return {
      exec: p.positionals[0] as string, all, dryRun: p.values["dry-run"] === true, json: p.values.json === true, force: p.values.force === true,
      kind: kindOfArgs(p.values.kind as string | undefined, p.values.seekable === true, p.values.bodies as string | undefined), level,
    };
  },
  async run(args, io, ctx) {
    if (args.all) {
      return runBatchCommand("diet", args.all, { dryRun: args.dryRun, json: args.json, diet: { kind: args.kind, force: args.force, ...(args.level !== undefined ? { casLevel: args.level } : {}) } }, io);
    }
    const layout = execLayout(ctx);
    if (args.dryRun) {
      let plan: DietPlan;
      try {
        plan = await planDiet(layout, { kind: args.kind, force: args.force });
      } catch (e) {
        if (!isJournalError(e) || e.code !== "ALREADY_DIETED") throw e;
        // What `diet` does on a dieted directory: re-verify the pair and the CAS, change nothing.
        const would = "already dieted: `diet` would re-verify events.jsonl.zst, journal.meta.json and the CAS bodies against the manifest and change nothing";
        if (args.json) await io.stdout(JSON.stringify({ ok: true, dryRun: true, alreadyDieted: true, would: "re-verify" }) + "\n");
        else await io.stdout(`${layout.exec}: ${would}\n`);
        return 0;
      }
      if (args.json) await io.stdout(JSON.stringify({ ok: plan.runCheck !== "refused", dryRun: true, plan }) + "\n");
      else await io.stdout(planText(plan));
      if (plan.runCheck !== "refused") return 0;
      io.stderr(`error RUN_NOT_FINISHED: the last run of ${layout.exec} is ${plan.lastRun}: diet would refuse (use --force to override)\n`);
      return 1;
    }
    if (io.stderrIsTTY) io.stderr(`dieting ${layout.exec} …\n`);
    const result = withIndex(await applyDiet(layout, { kind: args.kind, force: args.force, casLevel: args.level }), layout);
    if (args.json) await io.stdout(JSON.stringify({ ok: true, dryRun: false, result }) + "\n");
    else await io.stdout(resultText(result));
    return 0;
  },
};
