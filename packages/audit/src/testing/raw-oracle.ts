/**
 * Test oracle for `summary` and `blame`: runs and codon attempts read straight from the raw
 * journal lines with a deliberately small tracker (no reducer, no audit fold): which record each
 * CodonStarted / CodonTransitioned / RunCrashed line touched, and on which line each attempt
 * ended. Tests compare the product's answers with it. Not exported from the package index.
 */
import { readFileSync } from "node:fs";
import { isValidCodonEdge, layoutOf, missingMetadata } from "@hankweave-journal/core";

/** One attempt as the oracle sees it. */
export interface OracleAttempt {
  codonId: string;
  outcome: "completed" | "failed" | "crashed" | "skipped" | "running";
  startLine: number;
  endLine: number | null;
  /** failureReason.message, or skippedDuring for a skip. */
  why: string | null;
}

/** One run as the oracle sees it. */
export interface OracleRun {
  runId: string;
  startLine: number;
  endLine: number | null;
  status: string;
  attempts: OracleAttempt[];
}

const TERMINAL = new Set(["completed", "failed", "skipped"]);

/** Parsed lines of a plain journal: [line number, event] for every line that parses. */
export function parsedLines(exec: string): [number, { id: string; timestamp: string; type: string; data: any }][] {
  const text = readFileSync(layoutOf(exec).journal, "utf8");
  const out: [number, any][] = [];
  text.split("\n").forEach((l, i) => {
    if (l === "") return;
    try {
      out.push([i, JSON.parse(l)]);
    } catch {
      // corrupt line: not an event
    }
  });
  return out;
}

/** Runs oldest first with their attempts, from the raw lines of `exec`'s plain journal. */
export function oracleRuns(exec: string): OracleRun[] {
  const runs: OracleRun[] = [];
  const status = new Map<OracleAttempt, string>();
  for (const [line, e] of parsedLines(exec)) {
    if (e.type !== "state.transition") continue;
    const t = e.data?.transition;
    const d = t?.data ?? {};
    const run = runs.find((r) => r.runId === d.runId);
    switch (t?.type) {
      case "RunStarted":
        if (!run) runs.push({ runId: d.runId, startLine: line, endLine: null, status: "running", attempts: [] });
        break;
      case "RunCompleted":
      case "RunFailed":
        if (run) {
          run.status = t.type === "RunCompleted" ? "completed" : "failed";
          run.endLine ??= line;
        }
        break;
      case "RunCrashed":
        if (run) {
          run.status = "crashed";
          run.endLine ??= line;
          const open = run.attempts.find((a) => !TERMINAL.has(status.get(a)!));
          if (open) {
            status.set(open, "failed");
            open.outcome = "crashed";
            open.endLine = line;
            open.why = "Server crashed";
          }
        }
        break;
      case "CodonStarted":
        if (run) {
          const a: OracleAttempt = { codonId: d.codonId, outcome: "running", startLine: line, endLine: null, why: null };
          run.attempts.push(a);
          status.set(a, "preparing");
        }
        break;
      case "CodonTransitioned": {
        if (!run) break;
        const a = [...run.attempts].reverse().find((x) => x.codonId === d.codonId && !TERMINAL.has(status.get(x)!));
        if (!a || status.get(a) !== d.from || !isValidCodonEdge(d.from, d.to) || missingMetadata(d.to, d.metadata).length > 0) break;
        status.set(a, d.to);
        if (TERMINAL.has(d.to)) {
          a.outcome = d.to;
          a.endLine = line;
          a.why = d.to === "failed" ? d.metadata.failureReason?.message ?? null : d.to === "skipped" ? d.metadata.skippedDuring : null;
        }
        break;
      }
      default:
        break;
    }
  }
  return runs;
}
