/**
 * Test helpers: copy a conformance execution to a temp dir and plant one defect in its journal.
 * Each planter takes the journal's lines (without `\n`) and returns the new text plus the line
 * and code the audit must report. Not exported from the package index.
 */
import { cpSync, chmodSync, mkdtempSync, readFileSync, writeFileSync, readdirSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layoutOf } from "@hankweave-journal/core";

/** The conformance folder (override with HANKWEAVE_CONFORMANCE). */
export const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(import.meta.dirname, "../../../../../shared/conformance");

/** The five small conformance executions (333 transitions) plus plan-gen (2,636). */
export const SMALL_JOURNALS = [
  "budget-global-uniform-replay", "budget-loop-level-replay", "budget-loop-replay",
  "budget-on-exceeded-fail-replay", "budget-on-exceeded-override-replay",
] as const;

function makeWritable(p: string): void {
  chmodSync(p, statSync(p).isDirectory() ? 0o755 : 0o644);
  if (statSync(p).isDirectory()) for (const e of readdirSync(p)) makeWritable(path.join(p, e));
}

/** Copy conformance execution `name` into a fresh temp dir; returns the exec path. */
export function copyExecution(name: string, into?: string): string {
  const root = into ?? mkdtempSync(path.join(os.tmpdir(), "hw-audit-"));
  const exec = path.join(root, name);
  cpSync(path.join(CONF, name), exec, { recursive: true });
  makeWritable(exec);
  return exec;
}

/** The journal lines of `exec` (without the trailing empty string). */
export function journalLines(exec: string): string[] {
  const text = readFileSync(layoutOf(exec).journal, "utf8");
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Write `text` as the journal of `exec`. */
export function writeJournal(exec: string, text: string): void {
  writeFileSync(layoutOf(exec).journal, text);
}

/** One planted defect: the journal text after planting and the finding it must produce. */
export interface Planted {
  text: string;
  code: string;
  line: number;
  /** Lines inserted at or before which baseline findings shift by `shiftBy`. */
  insertedAt: number | null;
  shiftBy: number;
}

type Obj = Record<string, any>;
const parse = (s: string): Obj => JSON.parse(s) as Obj;
const join = (lines: string[], tail = "\n"): string => lines.join("\n") + tail;

/** A new state.transition line copying `like`'s envelope with a different transition. */
export function transitionLine(like: string, id: string, transition: { type: string; data: Obj }, resultingState: Obj): string {
  const e = parse(like);
  const data: Obj = { transitionType: transition.type };
  if (transition.data.runId !== undefined) data.runId = transition.data.runId;
  if (transition.data.codonId !== undefined) data.codonId = transition.data.codonId;
  data.transition = transition;
  data.resultingState = resultingState;
  return JSON.stringify({ id, timestamp: e.timestamp, type: "state.transition", data });
}

function insertAt(lines: string[], at: number, added: string[]): string[] {
  return [...lines.slice(0, at), ...added, ...lines.slice(at)];
}

/** The ten planted defects for budget-loop-level-replay (line numbers from 0; see the test). */
export function plantDefects(lines: string[]): Record<string, Planted> {
  const rs = (i: number): Obj => parse(lines[i]).data.resultingState;
  const runId = parse(lines[0]).data.runId as string;
  const out: Record<string, Planted> = {};
  // 1. An out-of-map edge after loop-codon#0 completed (line 42): completed → running.
  out.INVALID_TRANSITION = {
    text: join(insertAt(lines, 43, [transitionLine(lines[42], "1772736625901-planted1", {
      type: "CodonTransitioned", data: { runId, codonId: "loop-codon#0", from: "completed", to: "running", metadata: { claudeSessionId: "s" } },
    }, rs(42))])),
    code: "INVALID_TRANSITION", line: 43, insertedAt: 43, shiftBy: 1,
  };
  // 2. running → completed without checkpointSha, after post-loop-codon started running (line 50).
  out.MISSING_METADATA = {
    text: join(insertAt(lines, 51, [transitionLine(lines[50], "1772736629145-planted2", {
      type: "CodonTransitioned", data: { runId, codonId: "post-loop-codon", from: "running", to: "completed", metadata: {} },
    }, rs(50))])),
    code: "MISSING_METADATA", line: 51, insertedAt: 51, shiftBy: 1,
  };
  // 3. An AssistantMessageCountUpdated (line 12) for a run that does not exist.
  {
    const e = parse(lines[12]);
    e.data.runId = "no-such-run";
    e.data.transition.data.runId = "no-such-run";
    const l = lines.slice();
    l[12] = JSON.stringify(e);
    out.UNKNOWN_RUN = { text: join(l), code: "UNKNOWN_RUN", line: 12, insertedAt: null, shiftBy: 0 };
  }
  // 4. A journaled totalCost 0.5 too high on line 30.
  {
    const e = parse(lines[30]);
    e.data.resultingState.totalCost += 0.5;
    const l = lines.slice();
    l[30] = JSON.stringify(e);
    out.RESULTING_STATE_MISMATCH = { text: join(l), code: "RESULTING_STATE_MISMATCH", line: 30, insertedAt: null, shiftBy: 0 };
  }
  // 5. Line 20 reuses line 10's id.
  {
    const e = parse(lines[20]);
    e.id = parse(lines[10]).id;
    const l = lines.slice();
    l[20] = JSON.stringify(e);
    out.DUPLICATE_ID = { text: join(l), code: "DUPLICATE_ID", line: 20, insertedAt: null, shiftBy: 0 };
  }
  // 6. Line 21 (token.usage) stamped one second before line 20.
  {
    const e = parse(lines[21]);
    e.timestamp = new Date(Date.parse(parse(lines[20]).timestamp) - 1000).toISOString();
    const l = lines.slice();
    l[21] = JSON.stringify(e);
    out.TIME_BACKWARDS = { text: join(l), code: "TIME_BACKWARDS", line: 21, insertedAt: null, shiftBy: 0 };
  }
  // 7. Line 17 (assistant.action) is not JSON.
  {
    const l = lines.slice();
    l[17] = '{"id":"1772736623000-broken","timestamp":';
    out.CORRUPT_LINE = { text: join(l), code: "CORRUPT_LINE", line: 17, insertedAt: null, shiftBy: 0 };
  }
  // 8. An unterminated fragment after the last line.
  out.TORN_TAIL = { text: join(lines) + '{"id":"1772736634475-torn","timest', code: "TORN_TAIL", line: lines.length, insertedAt: null, shiftBy: 0 };
  // 9. A CheckpointCreated for the run after its RunCompleted (line 64).
  {
    const last = rs(lines.length - 1);
    out.EVENT_AFTER_RUN_END = {
      text: join([...lines, transitionLine(lines[lines.length - 1], "1772736634475-planted9", {
        type: "CheckpointCreated", data: { runId, codonId: "post-loop-codon", checkpointType: "completed", sha: "0123456789abcdef0123456789abcdef01234567" },
      }, last)]),
      code: "EVENT_AFTER_RUN_END", line: lines.length, insertedAt: null, shiftBy: 0,
    };
  }
  // 10. Two CodonStarted for a new codon before RunCompleted: the second finds the first non-terminal.
  {
    const before = lines.length - 1;
    const started = (n: number): string => transitionLine(lines[before - 1], `1772736634470-planted1${n}`, {
      type: "CodonStarted", data: { runId, codonId: "ghost" },
    }, rs(59));
    out.DUPLICATE_ACTIVE_CODON = {
      text: join(insertAt(lines, before, [started(0), started(1)])),
      code: "DUPLICATE_ACTIVE_CODON", line: before + 1, insertedAt: before, shiftBy: 2,
    };
  }
  return out;
}
