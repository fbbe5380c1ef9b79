import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf, type JournalReader, type StateTransition } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { foldJournal, type FoldOptions, type FoldOutcome } from "./fold-journal.js";
import { serializeState } from "./state-file.js";
import { scenario } from "./test-support/scenario.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let seq = 0;
function envelope(type: string, data: unknown): string {
  seq += 1;
  return JSON.stringify({ id: `${1_772_798_587_000 + seq}-x${seq}`, timestamp: new Date(1_772_798_587_000 + seq * 1000).toISOString(), type, data });
}

/** A state.transition line as the runtime writes it (resultingState is not checked by a fold). */
function transitionLine(t: StateTransition, n: number): string {
  const d = t.data as Record<string, unknown>;
  const data: Record<string, unknown> = { transitionType: t.type };
  if (d.runId !== undefined) data.runId = d.runId;
  if (d.codonId !== undefined) data.codonId = d.codonId;
  data.transition = t;
  data.resultingState = { currentRunId: n % 3 === 0 ? null : "r", runCount: n % 4, totalCost: n / 7, currentRunCost: n * 0.1 };
  return envelope("state.transition", data);
}

/** Lines each path must treat alike: escapes, duplicate and nested keys, bad bytes, blanks, corrupt JSON. */
function nastyLines(hot: string): (string | Buffer)[] {
  const i = hot.indexOf('"runId":"') + 9;
  return [
    "", "   ", "\r", "{not json", "[]", '{"id":"1","timestamp":"t","type":"state.transition"}',
    hot.replace('"type":"state.transition"', '"\\u0074ype":"state.transition"'),
    hot.replace('"type":"state.transition"', '"type":"info"').replace(',"data":{', ',"data":{"type":"state.transition",'),
    hot.replace('"type":"state.transition"', '"type":"info"') .slice(0, -1) + ',"type":"state.transition"}',
    hot.slice(0, -1) + ',"type":"info"}',
    hot.replace('{"id":', '{ "id":'),
    hot.replace('"newCount":', '"newCount": ').replace('"costDelta":', '"costDelta": '),
    hot.replace('"codonId":"', '"codonId":"\\u0063'),
    hot.replace(/"codonId":"[^"]*"/g, '"codonId":"é"'),
    Buffer.concat([Buffer.from(hot.slice(0, i)), Buffer.from([0xff, 0xfe]), Buffer.from(hot.slice(i))]),
    hot.replace('"runCount":', '"runCount":0').replace('"runCount":00', '"runCount":0'),
    hot.replace(/"totalCost":[^,}]*/, '"totalCost":1e400'),
    hot.replace(/"totalCost":[^,}]*/, '"totalCost":-'),
    hot.slice(0, 60),
    envelope("plan.updated", { plan: "nope" }),
    envelope("state.transition", { transitionType: "X" }),
    envelope("codon.started", { codonId: "alpha", startTime: "2026-01-01T00:00:00.000Z" }),
    envelope("state.snapshot", { completedCodons: [{ codonId: "alpha", status: "completed", startTime: "s", endTime: "e" }] }),
  ];
}

/**
 * A journal from a valid scenario with nasty lines mixed in at chosen places, optionally a
 * foreign one (no plan.updated first) and a torn tail.
 */
function journalBytes(choices: number[], mix: number[], foreign: boolean, torn: boolean): Buffer {
  const out: (string | Buffer)[] = [];
  if (!foreign) out.push(envelope("plan.updated", { plan: [] }));
  let n = 0;
  let lastHot = "";
  for (const s of scenario(choices)) {
    if (s.kind === "transition") {
      const line = transitionLine(s.t, n++);
      if (s.t.type === "CostsIncremented" || s.t.type === "AssistantMessageCountUpdated") lastHot = line;
      out.push(line);
    } else if (s.kind === "plan") {
      if (!foreign) out.push(envelope("plan.updated", { plan: s.plan }));
    } else {
      out.push(envelope(s.type, s.data));
    }
    if (mix.length > 0 && lastHot !== "") {
      const m = mix[n % mix.length];
      const nasty = nastyLines(lastHot);
      if (m % 3 === 0) out.push(nasty[m % nasty.length]);
    }
  }
  const parts = out.map((l) => (typeof l === "string" ? Buffer.from(l + "\n") : Buffer.concat([l, Buffer.from("\n")])));
  if (torn) parts.push(Buffer.from('{"id":"torn","timestamp":"'));
  return Buffer.concat(parts);
}

function execWith(bytes: Buffer): string {
  const exec = mkdtempSync(path.join(os.tmpdir(), "state-fold-lines-"));
  dirs.push(exec);
  mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  writeFileSync(layoutOf(exec).journal, bytes);
  return exec;
}

/** The same reader seen as a dieted one: foldJournal then takes the `events()` path instead of `chunks()`. */
function eventsOnly(reader: JournalReader): JournalReader {
  return Object.create(reader, { kind: { value: "dieted" } }) as JournalReader;
}

function comparable(o: FoldOutcome): unknown {
  return {
    state: serializeState(o.state), resultingState: o.resultingState, findings: o.findings, lastLine: o.lastLine,
    transitions: o.transitions, origin: o.origin, carried: o.carried, approximated: o.approximated,
  };
}

async function bothWays(exec: string, opts: FoldOptions = {}): Promise<{ fast: unknown; slow: unknown }> {
  const reader = await openReader(exec);
  try {
    expect(reader.kind).toBe("plain");
    const fast = comparable(await foldJournal(reader, opts));
    const slow = comparable(await foldJournal(eventsOnly(reader), opts));
    return { fast, slow };
  } finally {
    await reader.close();
  }
}

describe("the in-place fold of a plain journal equals the events() fold", () => {
  it("on any journal with nasty lines mixed in (same state, resultingState, findings with lines and offsets)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 1000 }), { minLength: 1, maxLength: 150 }), fc.array(fc.nat({ max: 1000 }), { maxLength: 20 }),
        fc.boolean(), fc.boolean(),
        async (choices, mix, foreign, torn) => {
          const exec = execWith(journalBytes(choices, mix, foreign, torn));
          const { fast, slow } = await bothWays(exec);
          expect(fast).toEqual(slow);
          rmSync(exec, { recursive: true, force: true });
        },
      ),
      { numRuns: 60 },
    );
  });

  it("on line ranges and continued folds", async () => {
    const bytes = journalBytes(Array.from({ length: 300 }, (_, i) => (i * 7919) % 997), [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33], false, true);
    const exec = execWith(bytes);
    const lines = bytes.toString("latin1").split("\n").length;
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: lines + 2 }), fc.nat({ max: lines + 2 }), async (a, b) => {
        const { fast, slow } = await bothWays(exec, { fromLine: Math.min(a, b), toLine: Math.max(a, b) });
        expect(fast).toEqual(slow);
        const reader = await openReader(exec);
        const first = await foldJournal(reader, { toLine: a });
        const rest = await foldJournal(reader, { folder: first.folder, fromLine: a + 1 });
        const slowFirst = await foldJournal(eventsOnly(reader), { toLine: a });
        const slowRest = await foldJournal(eventsOnly(reader), { folder: slowFirst.folder, fromLine: a + 1 });
        await reader.close();
        expect(comparable(rest)).toEqual(comparable(slowRest));
      }),
      { numRuns: 25 },
    );
  });

  it("with lines longer than a read chunk around hot lines", async () => {
    const big = (n: number): string => envelope("tool.result", { result: "x".repeat(n) });
    const choices = Array.from({ length: 120 }, (_, i) => (i * 104_729) % 9973);
    const body = journalBytes(choices, [0, 3], false, false).toString("latin1").split("\n").filter((l) => l !== "");
    const withBig: string[] = [];
    body.forEach((l, i) => {
      withBig.push(l);
      if (i % 40 === 5) withBig.push(big(700_000 + i * 1000));
      if (i === 60) withBig.push(big(2_500_000));
    });
    const exec = execWith(Buffer.from(withBig.join("\n") + "\n", "latin1"));
    const { fast, slow } = await bothWays(exec);
    expect(fast).toEqual(slow);
  });

  it("an aborted fold throws the signal's reason", async () => {
    const exec = execWith(journalBytes([1, 2, 3, 4, 5, 6], [], false, false));
    const reader = await openReader(exec);
    const ac = new AbortController();
    ac.abort(new Error("stop"));
    await expect(foldJournal(reader, { signal: ac.signal })).rejects.toThrow("stop");
    await reader.close();
  });
});
