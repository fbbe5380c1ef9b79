/**
 * `hankweave-journal restore <exec>` (also `--restore-journal <exec>`): rebuild events.jsonl from
 * the dieted pair, verified, published with link() (never overwrites); the pair and CAS are kept.
 */
import { readFileSync, statSync } from "node:fs";
import { JournalError, type ExecLayout } from "@hankweave-journal/core";
import { readManifest, restoreJournal } from "@hankweave-journal/diet";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";
import { BATCH_HELP, BATCH_OPTIONS, batchFlags, runBatchCommand, type BatchFlags } from "./fleet-batch.js";

export interface RestoreArgs {
  /** The execution (undefined with --all). */
  exec: string;
  /** `--all <root>`: the batch form (fleet-batch.ts), else null. */
  all: BatchFlags | null;
  json: boolean;
  dryRun: boolean;
}

function exists(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** NOTHING_TO_RESTORE unless a piece of the dieted pair exists (half a pair: the library says HALF_PAIR). */
function assertSomethingToRestore(layout: ExecLayout): void {
  if (exists(layout.manifest) || exists(layout.dietedJournal)) return;
  const plain = exists(layout.journal);
  throw new JournalError(
    "NOTHING_TO_RESTORE",
    plain
      ? `${layout.exec} holds a plain events.jsonl and no dieted journal: nothing to restore`
      : `${layout.exec} holds no journal at all (neither events.jsonl nor events.jsonl.zst + journal.meta.json): nothing to restore`,
    { path: layout.eventsDir },
  );
}

export const restoreCommand: Command<RestoreArgs> = {
  name: "restore",
  summary: "rebuild events.jsonl from a dieted journal, byte for byte (verified, never overwrites)",
  help: `usage: hankweave-journal restore <exec> [--dry-run] [--json]
       hankweave-journal --restore-journal <exec>   (the reference runtime's spelling)
       hankweave-journal restore --all <root> [--jobs N] [--status S] [--finished-before D] [--dry-run] [--json]

Rebuilds events/events.jsonl from events.jsonl.zst, journal.meta.json and the CAS, streaming,
verifying every body's SHA-256 and the whole file's size and SHA-256 against the manifest before
publishing it with a hard link. An existing events.jsonl with the manifest's SHA-256 is a no-op
success; one that differs is never overwritten (RESTORE_CONFLICT). The dieted pair and the CAS
are kept. A directory with a plain journal, or none, has nothing to restore (NOTHING_TO_RESTORE).

  --dry-run   say what restore would do (from the manifest); change nothing
  --json      print one JSON object {ok, result} ({ok, dryRun, would, …} with --dry-run)
${BATCH_HELP}

Examples:
  hankweave-journal restore ./runs/x
  hankweave-journal restore ./runs/x --dry-run --json
  hankweave-journal restore --all ./runs --jobs 2 --status completed --finished-before 30d --max-depth 8

Exit codes: 0 restored or already restored, 1 refused or failed (nothing published), 2 usage.`,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" }, "dry-run": { type: "boolean" }, ...BATCH_OPTIONS }, { min: 0, max: 1 });
    return { exec: p.positionals[0] as string, all: batchFlags(p), json: p.values.json === true, dryRun: p.values["dry-run"] === true };
  },
  progress(_args, layout) {
    // Restore's work is the bytes it writes, measured against the original journal's size.
    try {
      const m = JSON.parse(readFileSync(layout.manifest, "utf8")) as { originalBytes?: unknown };
      return { counter: "written", total: typeof m.originalBytes === "number" ? m.originalBytes : null };
    } catch {
      return { counter: "written", total: null };
    }
  },
  async run(args, io, ctx) {
    if (args.all) return runBatchCommand("restore", args.all, { dryRun: args.dryRun, json: args.json }, io);
    const layout = execLayout(ctx);
    assertSomethingToRestore(layout);
    if (args.dryRun) {
      const m = await readManifest(layout);
      const would = exists(layout.journal) ? "check" : "restore";
      const text = would === "check"
        ? `${layout.exec}: events.jsonl exists: restore would compare it with the manifest (${m.originalBytes} bytes, sha256 ${m.originalSha256}) and change nothing if it matches, refuse (RESTORE_CONFLICT) if not`
        : `${layout.exec}: restore would write events.jsonl: ${m.originalBytes} bytes, ${m.totalEvents} events, sha256 ${m.originalSha256}, from events.jsonl.zst and ${m.bodies?.unique ?? "the"} CAS bodies (verified before publishing); nothing changed`;
      if (args.json) await io.stdout(JSON.stringify({ ok: true, dryRun: true, would, originalBytes: m.originalBytes, originalSha256: m.originalSha256, totalEvents: m.totalEvents }) + "\n");
      else await io.stdout(text + "\n");
      return 0;
    }
    if (io.stderrIsTTY) io.stderr(`restoring ${layout.exec} …\n`);
    const result = await restoreJournal(layout);
    if (args.json) {
      await io.stdout(JSON.stringify({ ok: true, result }) + "\n");
    } else {
      await io.stdout(`${result.status} ${result.exec}: ${result.originalBytes} bytes, sha256 ${result.originalSha256} (verified)\n`);
    }
    return 0;
  },
};
