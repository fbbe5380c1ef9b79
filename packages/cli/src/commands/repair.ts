/**
 * `hankweave-journal repair <exec>`: quarantine a torn tail (byte-exact, in
 * `events.jsonl.torn-<offset>`), truncate to the last newline, rewrite the sidecar from a full
 * rescan. Claims runtime.lock create-if-absent; `--dry-run` prints the plan and changes nothing.
 */
import { applyRepair, claimLockForOfflineTool, planRepair, type RepairPlan } from "@hankweave-journal/journal";
import { parseCommandArgs } from "../args.js";
import { escapeTerminalText } from "../terminal-text.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface RepairArgs {
  exec: string;
  dryRun: boolean;
  json: boolean;
}

function planView(plan: RepairPlan) {
  return {
    journal: plan.journal,
    fileBytes: plan.fileBytes,
    tornTail: plan.tornTail,
    truncateTo: plan.truncateTo,
    counts: plan.counts,
    sidecarBefore: plan.sidecarBefore.status,
    sidecarAfter: plan.sidecarAfter,
    actions: plan.actions,
    findings: plan.findings.map((f) => ({ code: f.code, severity: f.severity, line: f.line ?? null, byteOffset: f.byteOffset ?? null, message: f.message })),
  };
}

export const repairCommand: Command<RepairArgs> = {
  name: "repair",
  summary: "quarantine a torn tail and rewrite the sidecar (--dry-run prints the plan)",
  help: `usage: hankweave-journal repair <exec> [--dry-run] [--json]

Quarantines an unterminated final fragment byte for byte in events/events.jsonl.torn-<offset>
(fsynced) before truncating the journal to its last newline, then rewrites events.meta.json from a
full rescan. Corrupt complete lines are reported, never modified. No byte is ever lost.
Claims runtime.lock (create-if-absent) and refuses while a live runtime holds it (LOCK_HELD).

  --dry-run   print the plan, change nothing (takes no lock)
  --json      print one JSON object {ok, dryRun, plan, applied}

Examples:
  hankweave-journal repair ./runs/x --dry-run
  hankweave-journal repair ./runs/x --json

Exit codes: 0 repaired or nothing to do, 1 corrupt lines remain (or an error), 2 usage.`,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { "dry-run": { type: "boolean" }, json: { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], dryRun: p.values["dry-run"] === true, json: p.values.json === true };
  },
  async run(args, io, ctx) {
    const layout = execLayout(ctx);
    let plan = await planRepair(layout);
    let applied: { quarantined: string | null; truncated: boolean; sidecarWritten: boolean } | null = null;
    if (!args.dryRun && plan.actions.length > 0) {
      const lock = await claimLockForOfflineTool(layout);
      try {
        // Re-plan under the lock: the journal may have changed since the first look.
        plan = await planRepair(layout);
        if (plan.actions.length > 0) {
          const r = await applyRepair(plan);
          applied = { quarantined: r.quarantined, truncated: r.truncated, sidecarWritten: r.sidecarWritten };
        }
      } finally {
        await lock.release();
      }
    }
    const ok = plan.counts.corruptLines === 0;
    if (args.json) {
      await io.stdout(JSON.stringify({ ok, dryRun: args.dryRun, plan: planView(plan), applied }) + "\n");
    } else {
      const lines: string[] = [];
      if (plan.actions.length === 0) lines.push("nothing to repair");
      for (const a of plan.actions) lines.push(`${args.dryRun ? "would " : ""}${a}`);
      if (applied) lines.push("done");
      for (const f of plan.findings) lines.push(`${f.severity} ${f.code}: ${f.message} (not modified)`);
      if (plan.counts.corruptLines > plan.findings.length) lines.push(`… ${plan.counts.corruptLines - plan.findings.length} more corrupt lines`);
      await io.stdout(escapeTerminalText(lines.join("\n") + "\n"));
    }
    return ok ? 0 : 1;
  },
};
