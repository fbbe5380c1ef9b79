/**
 * The reader contract suite (STYLE: one suite, run against the plain and the dieted journal).
 * `defineReaderContract` registers vitest cases that compare a JournalReader built from given
 * journal bytes with the independent oracle in `journal-oracle.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChunkOptions, Finding, JournalReader, JournalRecord, LineChunk, RawLine } from "@hankweave-journal/core";
import { isJournalError } from "@hankweave-journal/core";
import { journalOracle, oracleFiltered, type Oracle } from "./journal-oracle.js";
import { randomJournal, readerContractCases } from "./journal-cases.js";

/** Builds a reader over exactly `journalBytes` (e.g. write events.jsonl, or write and diet it). */
export type ReaderSetup = (journalBytes: Buffer) => Promise<{ reader: JournalReader; cleanup(): Promise<void> }>;

const hex = (b: Buffer | Uint8Array): string => Buffer.from(b).toString("hex");
const rawView = (l: RawLine | { line: number; offset: number; bytes: Buffer; terminated: boolean }) =>
  ({ line: l.line, offset: l.offset, bytes: hex(l.bytes), terminated: l.terminated });
const recView = (r: JournalRecord | { line: number; offset: number; bytes: Buffer; event: unknown }) =>
  ({ line: r.line, offset: r.offset, bytes: hex(r.bytes), event: r.event });
const findingView = (f: Finding | { code: string; line: number; byteOffset: number }) => ({ code: f.code, line: f.line, byteOffset: f.byteOffset });

async function collectLines(it: AsyncIterable<RawLine>) {
  const out = [];
  for await (const l of it) out.push(rawView(l));
  return out;
}

/**
 * The physical lines of `reader.chunks(opts)`, split on `\n`, checking each chunk's own numbers
 * (lines, offsets, the final `\n`) on the way. Bytes are copied before the iterator advances.
 */
async function collectChunkLines(reader: JournalReader, opts: ChunkOptions = {}) {
  const out: ReturnType<typeof rawView>[] = [];
  const kept: { chunk: LineChunk; copy: Buffer }[] = [];
  let torn = 0;
  for await (const c of reader.chunks(opts)) {
    expect(c.lines).toBeGreaterThan(0);
    if (opts.shared) {
      expect(c.bytes.buffer).toBeInstanceOf(SharedArrayBuffer);
      kept.push({ chunk: c, copy: Buffer.from(c.bytes) });
    }
    if (!c.terminated) {
      torn += 1;
      expect(c.lines).toBe(1);
      expect(c.bytes.includes(10)).toBe(false);
      out.push(rawView({ line: c.firstLine, offset: c.firstOffset, bytes: c.bytes, terminated: false }));
      continue;
    }
    expect(c.bytes[c.bytes.length - 1]).toBe(10);
    let from = 0;
    let line = c.firstLine;
    for (let nl = c.bytes.indexOf(10); nl >= 0; nl = c.bytes.indexOf(10, from)) {
      out.push(rawView({ line, offset: c.firstOffset + from, bytes: c.bytes.subarray(from, nl), terminated: true }));
      line += 1;
      from = nl + 1;
    }
    expect(line - c.firstLine).toBe(c.lines);
  }
  expect(torn).toBeLessThanOrEqual(1);
  // Shared chunks belong to the caller: still intact after the scan went on.
  for (const k of kept) expect(Buffer.from(k.chunk.bytes).equals(k.copy)).toBe(true);
  return out;
}

async function collectEvents(reader: JournalReader, opts: Parameters<JournalReader["events"]>[0] = {}) {
  const findings: ReturnType<typeof findingView>[] = [];
  const severities: string[] = [];
  const events = [];
  for await (const r of reader.events({ ...opts, onFinding: (f) => { findings.push(findingView(f)); severities.push(`${f.code}:${f.severity}`); } })) {
    events.push(recView(r));
  }
  return { events, findings, severities };
}

function checkJournal(name: string, bytes: () => Buffer, setup: ReaderSetup): void {
  describe(name, () => {
    let reader: JournalReader;
    let cleanup: () => Promise<void>;
    let o: Oracle;
    beforeAll(async () => {
      o = journalOracle(bytes());
      ({ reader, cleanup } = await setup(bytes()));
    });
    afterAll(async () => {
      await reader?.close();
      await cleanup?.();
    });

    it("lines() yields every physical line with exact offsets and bytes", async () => {
      expect(await collectLines(reader.lines())).toEqual(o.lines.map(rawView));
    });

    it("lines(range) yields exactly the requested slice", async () => {
      const n = o.lines.length;
      for (const [from, to] of [[0, 0], [1, 3], [Math.floor(n / 2), n - 1], [n - 1, n + 5], [n + 1, n + 2], [3, 1]]) {
        const want = o.lines.filter((l) => l.line >= from && l.line <= to).map(rawView);
        expect(await collectLines(reader.lines({ fromLine: from, toLine: to }))).toEqual(want);
      }
    });

    it("chunks() holds every physical line, with exact line numbers, offsets and bytes, at any chunk size, shared or not", async () => {
      const want = o.lines.map(rawView);
      expect(await collectChunkLines(reader)).toEqual(want);
      for (const chunkBytes of [1, 7, 64, 1000]) {
        expect(await collectChunkLines(reader, { chunkBytes })).toEqual(want);
        expect(await collectChunkLines(reader, { chunkBytes, shared: true })).toEqual(want);
      }
    });

    it("chunks({fromLine, toLine}) holds exactly the requested slice", async () => {
      const n = o.lines.length;
      for (const [from, to] of [[0, 0], [1, 3], [Math.floor(n / 2), n - 1], [n - 1, n + 5], [n + 1, n + 2], [3, 1]]) {
        const want = o.lines.filter((l) => l.line >= from && l.line <= to).map(rawView);
        expect(await collectChunkLines(reader, { fromLine: from, toLine: to })).toEqual(want);
        expect(await collectChunkLines(reader, { fromLine: from, toLine: to, chunkBytes: 16, shared: true })).toEqual(want);
      }
    });

    it("chunks({start}) continues from a line start an earlier scan gave", async () => {
      for (const k of [0, 1, Math.floor(o.lines.length / 2), o.lines.length - 1]) {
        const at = o.lines[k];
        if (at === undefined) continue;
        const want = o.lines.filter((l) => l.line >= k).map(rawView);
        expect(await collectChunkLines(reader, { start: { line: at.line, offset: at.offset } })).toEqual(want);
        expect(await collectChunkLines(reader, { start: { line: at.line, offset: at.offset }, chunkBytes: 5 })).toEqual(want);
      }
    });

    it("events() yields the oracle's events and reports its findings in file order", async () => {
      const got = await collectEvents(reader);
      expect(got.events).toEqual(o.events.map(recView));
      expect(got.findings).toEqual(o.findings.map(findingView));
      for (const s of got.severities) expect(s).toMatch(/^(CORRUPT_LINE:error|INVALID_UTF8:error|TORN_TAIL:warning)$/);
    });

    it("events() interleaves findings with records in line order (a finding arrives before the next record)", async () => {
      const seen: number[] = [];
      for await (const r of reader.events({ onFinding: (f) => void seen.push(f.line ?? -1) })) seen.push(r.line);
      const want = [...o.events.map((e) => e.line), ...o.findings.map((f) => f.line ?? -1)].sort((a, b) => a - b);
      expect(seen).toEqual(want);
    });

    it("events({types}) skips other types and keeps line numbers", async () => {
      for (const types of [["state.transition"], ["info", "tool.result"], ["no.such.type"]]) {
        const want = oracleFiltered(o, types);
        const got = await collectEvents(reader, { types });
        expect(got.events).toEqual(want.events.map(recView));
        expect(got.findings).toEqual(want.findings.map(findingView));
      }
    });

    it("events({fromLine, toLine}) is the range of the full scan", async () => {
      const from = Math.floor(o.lines.length / 3);
      const to = from + 5;
      const got = await collectEvents(reader, { fromLine: from, toLine: to });
      expect(got.events).toEqual(o.events.filter((e) => e.line >= from && e.line <= to).map(recView));
    });

    it("getLine returns the event, null for blank/corrupt/torn lines, and throws past the end", async () => {
      for (const l of o.lines) {
        const want = o.events.find((e) => e.line === l.line);
        const got = await reader.getLine(l.line);
        expect(got === null ? null : recView(got)).toEqual(want ? recView(want) : null);
      }
      const past = o.lines.length;
      const err = await reader.getLine(past).then(() => null, (e: unknown) => e);
      expect(isJournalError(err, "LINE_OUT_OF_RANGE")).toBe(true);
    });

    it("tail(n) returns the last n events, oldest first, owning their bytes", async () => {
      for (const n of [0, 1, 2, 5, o.events.length, o.events.length + 3]) {
        const got = await reader.tail(n);
        expect(got.map(recView)).toEqual(o.events.slice(Math.max(0, o.events.length - n)).map(recView));
      }
      const kept = await reader.tail(3);
      const snapshot = kept.map(recView);
      await collectEvents(reader);
      expect(kept.map(recView)).toEqual(snapshot);
    });

    it("page(from, limit) walks every event exactly once via nextLine", async () => {
      for (const limit of [1, 2, 7]) {
        const seen = [];
        let cursor: number | null = 0;
        let guard = 0;
        while (cursor !== null && guard++ < 10_000) {
          const p = await reader.page(cursor, limit);
          expect(p.records.length).toBeLessThanOrEqual(limit);
          seen.push(...p.records.map(recView));
          if (p.nextLine !== null) expect(p.nextLine).toBeGreaterThan(cursor);
          cursor = p.nextLine;
        }
        expect(seen).toEqual(o.events.map(recView));
      }
      const mid = o.lines.length > 2 ? Math.floor(o.lines.length / 2) : 0;
      const p = await reader.page(mid, 3);
      expect(p.records.map(recView)).toEqual(o.events.filter((e) => e.line >= mid).slice(0, 3).map(recView));
    });

    it("info() reports the original journal size", async () => {
      const info = await reader.info();
      expect(info.bytes).toBe(bytes().length);
      if (info.lines !== null) expect(info.lines).toBe(o.lines.filter((l) => l.terminated).length);
    });
  });
}

/**
 * Register the reader contract: for each case journal, `setup(bytes)` must give a reader that
 * yields what the oracle says (lines, offsets, bytes, events, findings, getLine, tail, page, info).
 *
 * @example defineReaderContract("plain reader", async (bytes) => { const exec = makeExecWithJournal(bytes); return { reader: await openPlainReader(exec), cleanup: () => rm(exec) }; });
 */
export function defineReaderContract(name: string, setup: ReaderSetup, opts: { randomJournals?: number } = {}): void {
  describe(`reader contract: ${name}`, () => {
    for (const c of readerContractCases()) checkJournal(c.name, () => c.bytes, setup);
    for (let seed = 1; seed <= (opts.randomJournals ?? 5); seed++) {
      const bytes = randomJournal(seed, 20 + seed * 15);
      checkJournal(`random journal #${seed}`, () => bytes, setup);
    }
  });
}
