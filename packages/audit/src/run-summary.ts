/**
 * Runs and codon attempts of a folded state, with their line numbers: what the report draws and
 * the index stores in `codon_attempts`. Pure.
 */
import { codonCost, type HankweaveState } from "@hankweave-journal/core";
import type { AttemptOutcome, CodonAttempt, RunSummary } from "./audit-types.js";
import { addTokens, recordTokens, zeroTokenUsage } from "./fold-helpers.js";
import { outcomeOf, reasonOf } from "./outcomes.js";
import type { RunLines } from "./run-lines.js";

function failureText(record: Record<string, unknown>): string | null {
  const r = record.failureReason as Record<string, unknown> | undefined;
  if (r === undefined || r === null || typeof r !== "object") return null;
  const parts = [typeof r.type === "string" ? r.type : null, typeof r.message === "string" ? r.message : null].filter((x) => x !== null);
  return parts.length > 0 ? parts.join(": ") : null;
}

/**
 * Every run of `state` in chronological order (oldest first), each with its attempts in array
 * order; outcomes and reasons by the one rule of `outcomes.ts`. `attempt` counts records of the same codonId within the run from 1.
 * @example summarizeRuns(fold.state, fold.lines)[0].attempts.map((a) => `${a.codon} ${a.outcome}`)
 */
export function summarizeRuns(state: HankweaveState, lines: RunLines): RunSummary[] {
  const out: RunSummary[] = [];
  for (let r = state.runs.length - 1; r >= 0; r--) {
    const run = state.runs[r];
    const entry = lines.get(run.runId);
    const seen = new Map<string, number>();
    const attempts: CodonAttempt[] = [];
    const tokens = zeroTokenUsage();
    let cost = 0;
    run.codons.forEach((rec, index) => {
      const attempt = (seen.get(rec.codonId) ?? 0) + 1;
      seen.set(rec.codonId, attempt);
      const recLines = entry?.records[index];
      const raw = rec as unknown as Record<string, unknown>;
      const outcome: AttemptOutcome = outcomeOf(rec, recLines?.crashed === true);
      const c = codonCost(rec);
      cost += c;
      const t = recordTokens(rec);
      addTokens(tokens, t);
      attempts.push({
        run: run.runId,
        codon: rec.codonId,
        attempt,
        index,
        status: rec.status,
        outcome,
        startLine: recLines?.startLine ?? -1,
        endLine: recLines?.endLine ?? null,
        startTime: rec.startTime,
        endTime: typeof raw.endTime === "string" ? raw.endTime : null,
        cost: c,
        tokens: t,
        loop: rec.loopContext ?? null,
        failureReason: failureText(raw),
        reason: reasonOf(rec, outcome),
      });
    });
    out.push({
      run: run.runId,
      status: run.status,
      startLine: entry?.startLine ?? null,
      endLine: entry?.endLine ?? null,
      startTime: run.startTime,
      endTime: run.endTime ?? null,
      cost,
      tokens,
      attempts,
    });
  }
  return out;
}
