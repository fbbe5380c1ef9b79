/**
 * `export --format trace`: the execution as a Chrome Trace Event Format JSON object (what Perfetto
 * UI and chrome://tracing open). One streaming pass over the journal (plain or dieted).
 *
 * Mapping: each run is a process (`pid` = its ordinal from 1, oldest first; pid 0 holds lines
 * before any run). Thread 1 "codon attempts" has one complete slice (`ph: "X"`) per attempt
 * (outcome and reason in its name and args, by the one rule of `outcomes.ts`), and nested inside
 * it a complete slice per tool call (assistant.action tool_use → tool.result, paired in order per
 * codon and tool name, clamped into its attempt) and instants (`ph: "i"`) for `error` events and
 * tool uses without a result. Thread 2 "sentinels" has an instant per sentinel.output. Counter
 * tracks (`ph: "C"`) "cost ($)" and "tokens" follow each run's cumulative cost and tokens. Every
 * slice and instant carries its journal line in `args.line` (from 0); counters cannot (every
 * counter arg is drawn as a series), their samples sit at the times of the cost-changing
 * transitions. Timestamps are µs since the first line.
 *
 * Guarantees: per track (pid+tid, or pid+counter name) timestamps never decrease; slices on a
 * thread nest properly (contained or disjoint). Memory: the trace events (about one per attempt,
 * tool call, error, sentinel output and cost change), not the journal.
 */
import { type JournalRecord, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { AuditFold } from "./audit-fold.js";
import type { CodonAttempt } from "./audit-types.js";
import { recordTokens } from "./fold-helpers.js";
import { tokenTotal } from "./outcomes.js";
import { summarizeRuns } from "./run-summary.js";
import { attemptLabel } from "./report-svg.js";

/** One Trace Event Format event (the fields this exporter writes). */
export interface TraceEvent {
  name: string;
  ph: "X" | "i" | "C" | "M";
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  s?: "t" | "p" | "g";
  cat?: string;
  cname?: string;
  args?: Record<string, unknown>;
}

/** The exported object (JSON Object Format of the Trace Event Format). */
export interface TraceFile {
  traceEvents: TraceEvent[];
  displayTimeUnit: "ms";
  otherData: Record<string, unknown>;
}

const TID_ATTEMPTS = 1;
const TID_SENTINELS = 2;
const CNAME: Record<string, string> = { completed: "good", failed: "bad", crashed: "terrible", skipped: "grey", running: "yellow" };
/** The event types the trace reads. */
const TRACE_TYPES: readonly string[] = ["state.transition", "assistant.action", "tool.result", "error", "sentinel.output"];
/** The tokens counter is sampled at most this often per run (journal time). */
const TOKEN_SAMPLE_MS = 1000;
/** Text kept from a message or tool input in args (the journal line has the rest). */
const MAX_ARG_CHARS = 200;

interface Pending {
  run: string | null;
  codon: string | null;
  tool: string;
  t: number;
  line: number;
}

interface Loose {
  run: string | null;
  codon: string | null;
  t: number;
  /** End (ms) for a slice, null for an instant. */
  end: number | null;
  name: string;
  cat: string;
  args: Record<string, unknown>;
  tid: number;
}

function clip(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v) ?? "";
  return s.length > MAX_ARG_CHARS ? `${s.slice(0, MAX_ARG_CHARS - 1)}…` : s;
}

/** What `exportTrace` returns. */
export interface TraceResult {
  trace: TraceFile;
  events: number;
  runs: number;
  attempts: number;
}

/**
 * Read `exec` and build its trace. Read-only.
 * @example const { trace } = await exportTrace("/runs/x"); JSON.stringify(trace)
 */
export async function exportTrace(exec: ExecRef, signal?: AbortSignal): Promise<TraceResult> {
  const layout = resolveExec(exec);
  const loose: Loose[] = [];
  const counters: { run: string; t: number; cost: number; tokens: number | null; line: number }[] = [];
  const pending = new Map<string, Pending[]>();
  let t0: number | null = null;
  let lastT = 0;
  let currentRun: string | null = null;
  const lastCost = new Map<string, number>();
  const lastTokenSample = new Map<string, number>();
  const rows: { run: string; cost: number; line: number; t: number }[] = [];
  const fold = new AuditFold({
    event: (info) => {
      currentRun = info.run;
    },
    row: (r) => {
      if (r.run === null || r.runCost === null) return;
      const t = Date.parse(r.time);
      if (Number.isNaN(t) || lastCost.get(r.run) === r.runCost) return;
      lastCost.set(r.run, r.runCost);
      rows.push({ run: r.run, cost: r.runCost, line: r.line, t });
    },
  });
  const reader = await openReader(layout);
  try {
    let n = 0;
    // Only the types the trace draws are parsed (the reader sniffs the type from the raw bytes): a
    // 1 GB journal's file.updated / state.snapshot / token.usage bodies are skipped unparsed.
    for await (const rec of reader.events({ types: TRACE_TYPES, onFinding: (f) => fold.finding(f) }) as AsyncIterable<JournalRecord>) {
      fold.event({ line: rec.line, offset: rec.offset, size: rec.bytes.length, event: rec.event });
      const t = Date.parse(rec.event.timestamp);
      if (!Number.isNaN(t)) {
        if (t0 === null) t0 = t;
        lastT = Math.max(lastT, t);
      }
      for (const row of rows.splice(0)) {
        // Tokens of the run (a sum over its records) need the fold's state, and handing the state
        // out costs the in-place fold a copy: sample them at most once per TOKEN_SAMPLE_MS of journal time.
        let tokens: number | null = null;
        if (row.t - (lastTokenSample.get(row.run) ?? -Infinity) >= TOKEN_SAMPLE_MS) {
          lastTokenSample.set(row.run, row.t);
          const run = fold.state.runs.find((x) => x.runId === row.run);
          tokens = 0;
          for (const c of run?.codons ?? []) tokens += tokenTotal(recordTokens(c));
        }
        counters.push({ run: row.run, t: row.t, cost: row.cost, tokens, line: row.line });
      }
      if (!Number.isNaN(t)) collect(rec, t, currentRun, pending, loose);
      if (signal?.aborted) break;
      if ((++n & 0xfff) === 0) await Promise.resolve();
    }
  } finally {
    await reader.close();
  }
  for (const list of pending.values()) {
    for (const p of list) {
      loose.push({ run: p.run, codon: p.codon, t: p.t, end: null, name: `tool ${p.tool} (no result)`, cat: "tool", args: { line: p.line, tool: p.tool }, tid: TID_ATTEMPTS });
    }
  }
  const runs = summarizeRuns(fold.state, fold.lines);
  const base = t0 ?? 0;
  const us = (ms: number): number => Math.round((ms - base) * 1000);
  const events: TraceEvent[] = [];
  const pidOf = new Map<string, number>();
  runs.forEach((r, i) => pidOf.set(r.run, i + 1));
  events.push({ name: "process_name", ph: "M", pid: 0, tid: 0, args: { name: "execution (before any run)" } });
  for (const r of runs) {
    const pid = pidOf.get(r.run)!;
    events.push({ name: "process_name", ph: "M", pid, tid: 0, args: { name: `run ${r.run} (${r.status})` } });
    events.push({ name: "process_sort_index", ph: "M", pid, tid: 0, args: { sort_index: pid } });
    events.push({ name: "thread_name", ph: "M", pid, tid: TID_ATTEMPTS, args: { name: "codon attempts" } });
    events.push({ name: "thread_name", ph: "M", pid, tid: TID_SENTINELS, args: { name: "sentinels" } });
  }

  // Attempts, and where each loose event belongs: the attempt of its run and codon that spans it.
  const spans = new Map<string, { a: CodonAttempt; s: number; e: number }[]>();
  for (const r of runs) {
    for (const a of r.attempts) {
      const s = Date.parse(a.startTime);
      const e = a.endTime !== null ? Date.parse(a.endTime) : lastT;
      if (Number.isNaN(s)) continue;
      const key = `${r.run}\u0000${a.codon}`;
      let list = spans.get(key);
      if (list === undefined) spans.set(key, (list = []));
      list.push({ a, s, e: Math.max(s, Number.isNaN(e) ? s : e) });
      events.push({
        name: `${attemptLabel(a)} — ${a.outcome}`, cat: "codon", ph: "X", pid: pidOf.get(r.run)!, tid: TID_ATTEMPTS, ts: us(s),
        dur: Math.max(0, us(Math.max(s, Number.isNaN(e) ? s : e)) - us(s)), cname: CNAME[a.outcome],
        args: {
          line: a.startLine, endLine: a.endLine, codonId: a.codon, attempt: a.attempt, outcome: a.outcome, status: a.status,
          cost: a.cost, tokens: tokenTotal(a.tokens), ...(a.reason !== null ? { reason: a.reason } : {}),
          ...(a.loop !== null ? { loopId: a.loop.loopId, iteration: a.loop.iteration } : {}),
        },
      });
    }
  }
  // Tool calls may run in parallel: a slice that would overlap the previous one of its lane moves
  // to the next lane (lane 0 = the attempts' thread, nested in its attempt; lane k = thread 2 + k).
  const laneEnds = new Map<number, number[]>();
  const placed: TraceEvent[] = [];
  for (const l of loose.sort((x, y) => x.t - y.t)) {
    const pid = l.run !== null ? pidOf.get(l.run) ?? 0 : 0;
    let s = l.t;
    let e = l.end;
    let tid = l.tid;
    if (l.tid === TID_ATTEMPTS) {
      const list = l.codon !== null && l.run !== null ? spans.get(`${l.run}\u0000${l.codon}`) : undefined;
      let host: { s: number; e: number } | undefined;
      for (const sp of list ?? []) if (sp.s <= l.t) host = sp;
      if (host !== undefined) {
        // Clamp into the attempt so it nests (clocks of tool events and transitions differ by ms).
        s = Math.min(Math.max(s, host.s), host.e);
        if (e !== null) e = Math.min(Math.max(e, s), host.e);
      } else if (e !== null) {
        // No attempt to nest in: keep it an instant so it cannot overlap another slice.
        e = null;
      }
      if (e !== null) {
        let ends = laneEnds.get(pid);
        if (ends === undefined) laneEnds.set(pid, (ends = []));
        let lane = ends.findIndex((end) => end <= s);
        if (lane < 0) {
          lane = ends.length;
          ends.push(e);
        } else ends[lane] = e;
        tid = lane === 0 ? TID_ATTEMPTS : TID_SENTINELS + lane;
      }
    }
    if (e === null) placed.push({ name: l.name, cat: l.cat, ph: "i", s: "t", pid, tid, ts: us(s), args: l.args });
    else placed.push({ name: l.name, cat: l.cat, ph: "X", pid, tid, ts: us(s), dur: Math.max(0, us(e) - us(s)), args: l.args });
  }
  for (const [pid, ends] of laneEnds) {
    for (let lane = 1; lane < ends.length; lane++) {
      events.push({ name: "thread_name", ph: "M", pid, tid: TID_SENTINELS + lane, args: { name: `parallel tool calls ${lane}` } });
    }
  }
  events.push(...placed);
  for (const c of counters) {
    const pid = pidOf.get(c.run) ?? 0;
    events.push({ name: "cost ($)", cat: "cost", ph: "C", pid, tid: 0, ts: us(c.t), args: { cost: c.cost } });
    if (c.tokens !== null) events.push({ name: "tokens", cat: "cost", ph: "C", pid, tid: 0, ts: us(c.t), args: { tokens: c.tokens } });
  }
  // Close each run's counters with its final figures (the sampled tokens may lag behind).
  for (const r of runs) {
    const pid = pidOf.get(r.run)!;
    const end = r.endTime !== null ? Date.parse(r.endTime) : lastT;
    const last = counters.filter((c) => c.run === r.run).reduce((m, c) => Math.max(m, c.t), Number.NEGATIVE_INFINITY);
    const at = Math.max(Number.isNaN(end) ? lastT : end, last);
    if (!Number.isFinite(at)) continue;
    events.push({ name: "cost ($)", cat: "cost", ph: "C", pid, tid: 0, ts: us(at), args: { cost: r.cost } });
    events.push({ name: "tokens", cat: "cost", ph: "C", pid, tid: 0, ts: us(at), args: { tokens: tokenTotal(r.tokens) } });
  }
  sortForTracks(events);
  const attempts = runs.reduce((k, r) => k + r.attempts.length, 0);
  return {
    trace: {
      traceEvents: events, displayTimeUnit: "ms",
      otherData: { exec: layout.exec, journal: layout.journal, startTime: t0 !== null ? new Date(t0).toISOString() : null, generator: "hankweave-journal export --format trace" },
    },
    events: events.length, runs: runs.length, attempts,
  };
}

function collect(rec: JournalRecord, t: number, run: string | null, pending: Map<string, Pending[]>, loose: Loose[]): void {
  const d = (rec.event.data ?? {}) as Record<string, unknown>;
  const codon = typeof d.codonId === "string" ? d.codonId : typeof d.codon === "string" ? d.codon : null;
  switch (rec.event.type) {
    case "assistant.action": {
      if (d.action !== "tool_use") return;
      const tool = typeof d.toolName === "string" ? d.toolName : "?";
      const key = `${run}\u0000${codon}\u0000${tool}`;
      let list = pending.get(key);
      if (list === undefined) pending.set(key, (list = []));
      list.push({ run, codon, tool, t, line: rec.line });
      return;
    }
    case "tool.result": {
      const tool = typeof d.toolName === "string" ? d.toolName : "?";
      const p = pending.get(`${run}\u0000${codon}\u0000${tool}`)?.shift();
      const args = { line: p?.line ?? rec.line, resultLine: rec.line, tool, ...(typeof d.toolUseId === "string" ? { toolUseId: d.toolUseId } : {}) };
      if (p === undefined) loose.push({ run, codon, t, end: null, name: `tool ${tool} result`, cat: "tool", args, tid: TID_ATTEMPTS });
      else loose.push({ run, codon, t: p.t, end: Math.max(p.t, t), name: `tool ${tool}`, cat: "tool", args, tid: TID_ATTEMPTS });
      return;
    }
    case "error":
      loose.push({
        run, codon, t, end: null, name: `error: ${clip(d.message)}`, cat: "error", tid: TID_ATTEMPTS,
        args: { line: rec.line, message: clip(d.message), ...(d.fatal !== undefined ? { fatal: d.fatal } : {}) },
      });
      return;
    case "sentinel.output":
      loose.push({
        run, codon, t, end: null, name: `sentinel ${clip(d.sentinelId)}`, cat: "sentinel", tid: TID_SENTINELS,
        args: { line: rec.line, sentinelId: d.sentinelId, codonId: codon, content: clip(d.content) },
      });
      return;
    default:
      return;
  }
}

/**
 * Order events so every track reads forward in time: metadata first, then by ts; at equal ts a
 * longer slice before a shorter one (the parent before its child). Stable.
 */
function sortForTracks(events: TraceEvent[]): void {
  const rank = events.map((e, i) => ({ e, i }));
  rank.sort((x, y) => {
    const mx = x.e.ph === "M" ? 0 : 1;
    const my = y.e.ph === "M" ? 0 : 1;
    if (mx !== my) return mx - my;
    const tx = x.e.ts ?? 0;
    const ty = y.e.ts ?? 0;
    if (tx !== ty) return tx - ty;
    const dx = x.e.dur ?? -1;
    const dy = y.e.dur ?? -1;
    if (dx !== dy) return dy - dx;
    return x.i - y.i;
  });
  for (let i = 0; i < rank.length; i++) events[i] = rank[i].e;
}

/**
 * The trace as JSON text chunks (one event per line inside `traceEvents`), for writing a large
 * trace without building one huge string.
 */
export function* traceJsonChunks(trace: TraceFile, eventsPerChunk = 2000): Generator<string> {
  yield `{"displayTimeUnit":"ms","otherData":${JSON.stringify(trace.otherData)},"traceEvents":[\n`;
  const ev = trace.traceEvents;
  for (let i = 0; i < ev.length; i += eventsPerChunk) {
    const part = ev.slice(i, i + eventsPerChunk).map((e) => JSON.stringify(e));
    yield (i > 0 ? ",\n" : "") + part.join(",\n");
  }
  yield "\n]}\n";
}
