/**
 * The data shapes of an audit: one row per `state.transition`, findings, codon attempts and
 * runs. All are plain JSON-friendly objects with a fixed key order (what `--json` prints).
 */
import type {
  CodonOutcome, CodonStatus, Finding, JournalEvent, LoopContext, ResultingState, TokenUsage,
} from "@hankweave-journal/core";

/** One parsed journal line as the fold consumes it. */
export interface FoldEvent {
  line: number;
  offset: number;
  /** Byte length of the line without its `\n`. */
  size: number;
  event: JournalEvent;
}

/** One `state.transition`, after it was applied. */
export interface AuditRow {
  line: number;
  offset: number;
  time: string;
  run: string | null;
  codon: string | null;
  transition: string;
  /** CodonTransitioned only. */
  from: string | null;
  to: string | null;
  /** `from→to` for CodonTransitioned, else the transition type. */
  edge: string;
  /** False when the reducer dropped the transition (state unchanged; see the finding). */
  applied: boolean;
  /** Cost of the codon's latest record after the transition (null without a codon). */
  codonCost: number | null;
  /** Cost of the run after the transition (null without a run). */
  runCost: number | null;
  journaled: ResultingState | null;
  recomputed: ResultingState;
}

/** A finding attributed to a run and codon (the run current at that line when not explicit). */
export interface AuditFinding extends Finding {
  line: number;
  run: string | null;
  codon: string | null;
}

/** One event as the index stores it. */
export interface EventInfo {
  line: number;
  offset: number;
  id: string;
  time: string;
  type: string;
  category: string;
  run: string | null;
  codon: string | null;
  size: number;
}

/** How an attempt ended; `running` = not ended (yet); `crashed` = failed by RunCrashed (core's `outcomeOf`). */
export type AttemptOutcome = CodonOutcome;

/** One codon record of a run = one attempt (a retry or loop iteration is a new record). */
export interface CodonAttempt {
  run: string;
  codon: string;
  /** 1-based count of records with this codonId in this run. */
  attempt: number;
  /** Position in the run's `codons` array. */
  index: number;
  status: CodonStatus;
  outcome: AttemptOutcome;
  startLine: number;
  endLine: number | null;
  startTime: string;
  endTime: string | null;
  cost: number;
  tokens: TokenUsage;
  loop: LoopContext | null;
  failureReason: string | null;
  /** Why a failed, crashed or skipped attempt did not complete (`reasonOf`), else null. */
  reason: string | null;
}

/** One run with its attempts. */
export interface RunSummary {
  run: string;
  status: string;
  startLine: number | null;
  endLine: number | null;
  startTime: string;
  endTime: string | null;
  cost: number;
  tokens: TokenUsage;
  attempts: CodonAttempt[];
}

/** What a fold reports as it goes; every callback optional. */
export interface AuditSink {
  row?(row: AuditRow): void;
  finding?(finding: AuditFinding): void;
  event?(info: EventInfo): void;
}
