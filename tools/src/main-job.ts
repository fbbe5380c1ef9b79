/**
 * The main job (`npm start`): everything the product does, on the bundled execution
 * `fixtures/main-job/exec` (made by our own generator, see its README).
 *
 * 1. read the journal and print its statistics;
 * 2. rebuild the state from the journal and show it next to what the saved state.json says;
 * 3. diet a copy of the execution, show the sizes, restore it and check the SHA-256;
 * 4. audit it in line order, summarize what happened, and write the HTML report, printing its path.
 *
 * It never modifies the bundled fixture: steps that write work on a copy in a temp directory.
 * Exit 0 when every step agrees, 1 otherwise.
 */
import { cpSync, mkdirSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { codonCost, layoutOf, type HankweaveState } from "@hankweave-journal/core";
import { foldExecution, savedStateOf } from "@hankweave-journal/state";
import { applyDiet, restoreJournal, hashFile } from "@hankweave-journal/diet";
import {
  auditExecution, formatAuditSummary, formatOutcomes, formatSummary, runOutcomes, runsOldestFirst, summarizeAudit, summaryOf, writeReport,
} from "@hankweave-journal/audit";
import { processIO, runCli } from "@hankweave-journal/cli";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const FIXTURE = join(ROOT, "fixtures", "main-job", "exec");

function heading(title: string): void {
  process.stdout.write(`\n== ${title}\n`);
}

interface RunLine {
  runId: string;
  status: string;
  codons: number;
  outcomes: string;
  cost: number;
}

/**
 * One line per run, oldest first: status, codon attempts by outcome, cost (runtime-faithful codon
 * costs). Outcomes and order by the audit package's one definition (`outcomes.ts`), so this step,
 * the audit step and the summary call a crashed codon "crashed" alike.
 */
function runLines(state: HankweaveState): RunLine[] {
  return runsOldestFirst(state.runs).map((run) => {
    let cost = 0;
    for (const c of run.codons) cost += codonCost(c);
    return { runId: run.runId, status: run.status, codons: run.codons.length, outcomes: formatOutcomes(runOutcomes(run)), cost };
  });
}

function printSideBySide(folded: HankweaveState, saved: HankweaveState | null): boolean {
  const a = runLines(folded);
  const b = saved ? runLines(saved) : [];
  const rows = [["run", "fold of the journal", "saved state.json", ""]];
  let same = saved !== null && a.length === b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const fa = a[i];
    const sb = b[i];
    const show = (r: RunLine | undefined) => (r ? `${r.status}, ${r.codons} attempts (${r.outcomes}), $${r.cost.toFixed(4)}` : "—");
    const agree = fa !== undefined && sb !== undefined && show(fa) === show(sb) && fa.runId === sb.runId;
    if (!agree) same = false;
    rows.push([(fa ?? sb)!.runId, show(fa), show(sb), agree ? "=" : "≠"]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) process.stdout.write(r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd() + "\n");
  const total = (s: HankweaveState) => s.runs.reduce((t, r) => t + r.codons.reduce((u, c) => u + codonCost(c), 0), 0);
  process.stdout.write(
    `total cost: fold $${total(folded).toFixed(6)}, state.json ${saved ? `$${total(saved).toFixed(6)}` : "absent"}; ` +
      `executionPlan ${folded.executionPlan.length} entries; currentRunId ${folded.currentRunId ?? "null"}\n`,
  );
  return same;
}

function sizeOf(path: string): number {
  return statSync(path).size;
}

async function main(): Promise<number> {
  const io = processIO();
  let ok = true;
  process.stdout.write(`hankweave-journal main job on ${relative(process.cwd(), FIXTURE) || FIXTURE}\n`);

  heading("1. the journal");
  const statsCode = await runCli(["stats", FIXTURE], io);
  if (statsCode !== 0) ok = false;

  heading("2. state rebuilt from the journal, next to the saved state.json");
  const fold = await foldExecution(FIXTURE);
  const saved = savedStateOf(fold.savedStates);
  if (!printSideBySide(fold.state, saved)) ok = false;
  const diffCode = await runCli(["diff", FIXTURE], io);
  if (diffCode !== 0) ok = false;

  heading("3. diet and restore a copy");
  const work = mkdtempSync(join(tmpdir(), "hankweave-main-job-"));
  const copy = join(work, "exec");
  cpSync(FIXTURE, copy, { recursive: true });
  const before = await hashFile(layoutOf(copy).journal);
  const diet = await applyDiet(copy);
  const s = diet.stored;
  const pct = (n: number) => `${((100 * n) / diet.originalBytes).toFixed(1)}%`;
  process.stdout.write(
    `dieted (dietVersion ${diet.dietVersion}): ${diet.originalBytes} bytes, ${diet.totalEvents} events → ` +
      `${s.totalBytes} bytes (${pct(s.totalBytes)}): pointer journal ${s.pointerJournalBytes}, ` +
      `CAS ${s.casBytes} (${diet.bodies.unique} unique of ${diet.bodies.moved} bodies moved), manifest ${s.manifestBytes}\n`,
  );
  // The dieted copy is read transparently (no restore needed) and checked deeply: every CAS blob's
  // hash, a restore dry run against originalSha256, the fold against state.json.
  if ((await runCli(["verify", copy, "--deep"], io)) !== 0) ok = false;
  const restored = await restoreJournal(copy);
  const after = await hashFile(layoutOf(copy).journal);
  const same = after.sha256 === before.sha256 && after.bytes === before.bytes && restored.originalSha256 === before.sha256;
  process.stdout.write(
    `restored (${restored.status}, published by ${restored.publishedBy}): ${after.bytes} bytes, sha256 ${after.sha256} ` +
      `${same ? "= original (verified)" : `≠ original ${before.sha256}`}\n`,
  );
  if (!same) ok = false;

  heading("4. audit by line order, and the report");
  const audit = await auditExecution(FIXTURE, {});
  process.stdout.write(formatAuditSummary(summarizeAudit(audit)) + "\n");
  process.stdout.write("\nwhat happened (hankweave-journal summary):\n");
  process.stdout.write(formatSummary(summaryOf(audit)));
  mkdirSync(join(ROOT, "out"), { recursive: true });
  const reportPath = join(ROOT, "out", "main-job-report.html");
  const report = await writeReport(FIXTURE, reportPath);
  process.stdout.write(`report: ${report.path} (${sizeOf(report.path)} bytes, ${report.attempts} codon attempts, open it in a browser)\n`);
  if (audit.findings.error > 0) ok = false;

  process.stdout.write(`\n${ok ? "main job: OK" : "main job: FAILED (see above)"}\n`);
  return ok ? 0 : 1;
}

process.exitCode = await main();
