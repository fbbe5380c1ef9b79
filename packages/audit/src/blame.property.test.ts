import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evolve, initialState, type HankweaveState, type JournalRecord } from "@hankweave-journal/core";
import { anyTransition, validTransitionSequence, type TimedTransition } from "@hankweave-journal/core/testing";
import { parseBlamePath, readAt } from "./blame-path.js";
import { BlameTracker, resolvePath } from "./blame.js";

/** Journal records of a transition sequence (line i = transition i). */
function records(seq: readonly TimedTransition[]): JournalRecord[] {
  return seq.map(([t, at], i) => {
    const data: Record<string, unknown> = { transitionType: (t as { type?: unknown } | null)?.type, transition: t };
    const event = { id: `${Date.parse(at)}-p${i}`, timestamp: at, type: "state.transition", data };
    return { line: i, offset: i * 100, bytes: Buffer.alloc(0), event };
  });
}

/** The state after lines 0..upTo (inclusive) by the pure reducer (-1: the initial state). */
function replay(seq: readonly TimedTransition[], upTo: number): HankweaveState {
  let s = initialState();
  for (let i = 0; i <= upTo; i++) s = evolve(s, seq[i][0], seq[i][1]);
  return s;
}

const FIELDS = ["status", "currentCost", "finalCost", "partialCost", "endTime", "startTime", "currentTokens.inputTokens", "failedDuring", "sentinels"];

/** Every path the final state has (a few fields per record), in both spellings. */
function pathsOf(s: HankweaveState): string[] {
  const out = ["currentRunId", "initialCheckpoint"];
  s.runs.forEach((r, ri) => {
    // The friendly form names runs whose id it can spell (non-empty, no '/' or '.'); a reused id
    // names the newest run holding it (the first in state order).
    const friendly = r.runId !== "" && !/[/.]/.test(r.runId) && s.runs.findIndex((x) => x.runId === r.runId) === ri;
    out.push(`runs[${ri}].status`, `runs[${ri}].endTime`);
    if (friendly) out.push(`run:${r.runId}.status`);
    const seen = new Map<string, number>();
    r.codons.forEach((c, ci) => {
      const n = (seen.get(c.codonId) ?? 0) + 1;
      seen.set(c.codonId, n);
      for (const f of FIELDS) {
        out.push(`runs[${ri}].codons[${ci}].${f}`);
        if (friendly && !/[./@]/.test(c.codonId) && c.codonId !== "") {
          out.push(`run:${r.runId}/codon:${c.codonId}@${n}.${f}`);
        }
      }
    });
  });
  return out;
}

function check(seq: readonly TimedTransition[], pick: number): void {
  const recs = records(seq);
  const final = replay(seq, seq.length - 1);
  const paths = pathsOf(final);
  const text = paths[pick % paths.length];
  const path = parseBlamePath(text);
  const tracker = new BlameTracker(path, true);
  for (const r of recs) tracker.feed(r);
  expect(tracker.current).toEqual(final);
  const { ri, ci } = resolvePath(path, final);
  const ord = ri === null ? null : final.runs.length - 1 - ri;
  const track = tracker.trackOf(ord, ci);
  const valueIn = (s: HankweaveState): unknown => {
    // The same run and record by identity: runs are found by chronological position, records by index.
    if (ri === null) return readAt(s, path.rest);
    const run = s.runs[s.runs.length - 1 - ord!];
    const root = ci === null ? run : run?.codons[ci];
    return readAt(root, path.rest);
  };
  const value = valueIn(final);
  if (track.last === null) {
    // Never set: the value is the one before any line.
    expect(value).toEqual(valueIn(initialState()));
    return;
  }
  const L = track.last.line;
  expect(valueIn(replay(seq, L)), `${text} at its blamed line ${L}`).toEqual(value);
  expect(valueIn(replay(seq, L - 1)), `${text} before its blamed line ${L}`).not.toEqual(value);
  expect(track.last.value).toEqual(value);
  // Every history entry is a real change, in line order, ending with the last one.
  const lines = track.history.map((c) => c.line);
  expect(lines).toEqual([...lines].sort((a, b) => a - b));
  expect(track.history[track.history.length - 1]).toEqual(track.last);
  for (const c of track.history) expect(valueIn(replay(seq, c.line))).toEqual(c.value);
}

describe("blame (property)", () => {
  it("replaying up to the blamed line gives the value, the line before does not (valid journals)", () => {
    fc.assert(fc.property(validTransitionSequence(80), fc.nat(), (seq, pick) => check(seq, pick)), { numRuns: 100 });
  });

  it("holds too when transitions may be invalid, dropped or about unknown runs", () => {
    const mixed = fc.tuple(validTransitionSequence(50), fc.array(fc.tuple(fc.nat(), anyTransition()), { maxLength: 12 })).map(([seq, extra]) => {
      const out = [...seq];
      for (const [at, t] of extra) out.splice(at % (out.length + 1), 0, [t, seq[0]?.[1] ?? "2026-03-05T12:00:00.000Z"] as const);
      return out.map(([t], i) => [t, new Date(Date.parse("2026-03-05T12:00:00.000Z") + i * 1000).toISOString()] as const);
    });
    fc.assert(fc.property(mixed, fc.nat(), (seq, pick) => check(seq, pick)), { numRuns: 100 });
  });
});
