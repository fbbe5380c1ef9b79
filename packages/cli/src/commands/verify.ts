/**
 * `verify <exec>`: can the files be trusted? Exit 0 clean, 1 findings (errors or warnings).
 */
import { verifyExecution } from "@hankweave-journal/audit";
import { JournalError } from "@hankweave-journal/core";
import { parseCommandArgs } from "../args.js";
import { humanIO } from "../terminal-text.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";
import { BATCH_HELP, BATCH_OPTIONS, batchFlags, runBatchCommand, type BatchFlags } from "./fleet-batch.js";

export interface VerifyArgs {
  /** The execution (undefined with --all). */
  exec: string;
  /** `--all <root>`: the batch form (fleet-batch.ts), else null. */
  all: BatchFlags | null;
  dryRun: boolean;
  deep: boolean;
  json: boolean;
}

const HELP = `usage: hankweave-journal verify <exec> [--deep] [--json]
       hankweave-journal verify --all <root> [--deep] [--jobs N] [--status S] [--finished-before D] [--dry-run] [--json]

Default (one streaming read of the journal): corrupt lines, torn tail, the sidecar
(events.meta.json) against the file, the manifest (journal.meta.json) against the journal, and for
a dieted journal every referenced CAS body (rehydrated and hash-checked while reading).
--deep adds: every CAS blob's SHA-256, a restore dry run's SHA-256 and size against the manifest's
originalSha256/originalBytes, and the fold of the journal against state.json.
Nothing is modified. Ends with one summary line.

  --deep   the expensive checks too
  --json   one object {exec, kind, deep, events, checks, findings, summary, ok}
  --dry-run             with --all: list what would be verified
${BATCH_HELP}

Examples:
  hankweave-journal verify ./runs/x
  hankweave-journal verify ./runs/x --deep --json
  hankweave-journal verify --all ./runs --jobs 2 --status completed --finished-before 2026-11-30 --max-depth 8 --dry-run

Exit codes: 0 clean (info findings allowed), 1 error/warning findings or failure, 2 usage.`;

export const verifyCommand: Command<VerifyArgs> = {
  name: "verify",
  summary: "check sidecar, manifest, CAS, torn tail, corrupt lines (--deep: restore dry run, state.json)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { deep: { type: "boolean" }, json: { type: "boolean" }, "dry-run": { type: "boolean" }, ...BATCH_OPTIONS }, { min: 0, max: 1 });
    const all = batchFlags(p);
    if (!all && p.values["dry-run"] === true) throw new JournalError("USAGE", "--dry-run needs --all <root> (verify changes nothing anyway)");
    return { exec: p.positionals[0] as string, all, dryRun: p.values["dry-run"] === true, deep: p.values.deep === true, json: p.values.json === true };
  },
  async run(args, io, ctx) {
    if (args.all) return runBatchCommand("verify", args.all, { dryRun: args.dryRun, json: args.json, verify: { deep: args.deep } }, io);
    const r = await verifyExecution(execLayout(ctx), { deep: args.deep });
    if (args.json) {
      await io.stdout(JSON.stringify(r) + "\n");
      return r.ok ? 0 : 1;
    }
    io = humanIO(io);
    for (const c of r.checks) await io.stdout(`${c.status.padEnd(8)} ${c.name.padEnd(16)} ${c.note}${c.ms > 0 ? ` (${c.ms} ms)` : ""}\n`);
    for (const f of r.findings) {
      const where = f.line !== undefined ? `line ${f.line}: ` : "";
      await io.stdout(`${f.severity.padEnd(8)} ${f.code.padEnd(16)} ${where}${f.message}\n`);
    }
    const ran = r.checks.filter((c) => c.status !== "skipped").length;
    await io.stdout(
      `verify ${r.exec}: ${r.ok ? "OK" : "FINDINGS"} — ${r.kind} journal, ${r.events} events, ${ran} checks${r.deep ? " (deep)" : ""}, ` +
        `${r.summary.error} errors, ${r.summary.warning} warnings, ${r.summary.info} info\n`,
    );
    return r.ok ? 0 : 1;
  },
};
