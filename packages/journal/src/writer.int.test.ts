import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openJournalWriter, type Durability } from "./writer.js";
import { openPlainReader } from "./plain-reader.js";
import { DEFAULT_DURABILITY } from "./durable-file.js";
import { serializeSidecar } from "./sidecar.js";

const dirs: string[] = [];
function freshExec(): string {
  const d = mkdtempSync(`${tmpdir()}/hwj-writer-`);
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const sidecarOf = (exec: string) => JSON.parse(readFileSync(layoutOf(exec).sidecar, "utf8"));

describe("journal writer", () => {
  it("appends concurrent events in submission order with exact line numbers and offsets", async () => {
    const exec = freshExec();
    const w = await openJournalWriter(exec, { durability: "batch" });
    expect(w.openReport.created).toBe(true);
    const acks = await Promise.all(Array.from({ length: 3000 }, (_, i) => w.append({ type: "info", data: { i, pad: "é".repeat(i % 7) } })));
    await w.close();
    const file = readFileSync(layoutOf(exec).journal);
    let offset = 0;
    acks.forEach((a, i) => {
      expect(a.line).toBe(i);
      expect(a.offset).toBe(offset);
      expect((a.event.data as { i: number }).i).toBe(i);
      expect(file.subarray(a.offset, a.offset + a.bytes).toString()).toBe(JSON.stringify(a.event) + "\n");
      offset += a.bytes;
    });
    expect(file.length).toBe(offset);
  });

  it.each<[Durability, (events: number, s: { syncs: number; batches: number }) => boolean]>([
    ["none", (_n, s) => s.syncs === 0],
    ["batch", (n, s) => s.syncs === s.batches && s.syncs < n / 10],
    ["every", (n, s) => s.syncs === n && s.batches === n],
  ])("durability %s issues the expected fsyncs (group commit under batch)", async (durability, check) => {
    const exec = freshExec();
    const w = await openJournalWriter(exec, { durability });
    await Promise.all(Array.from({ length: 500 }, (_, i) => w.append({ type: "info", data: { i } })));
    const s = w.ioStats();
    await w.close();
    expect(check(500, s)).toBe(true);
  });

  it("defaults to durability every, the one default of durable-file.ts (state.json's too)", async () => {
    const w = await openJournalWriter(freshExec());
    expect(w.durability).toBe(DEFAULT_DURABILITY);
    expect(DEFAULT_DURABILITY).toBe("every");
    await Promise.all(Array.from({ length: 5 }, (_, i) => w.append({ type: "info", data: { i } })));
    expect(w.ioStats()).toMatchObject({ syncs: 5, batches: 5 });
    await w.close();
  });

  it("never writes more than 10,000 lines in one write", async () => {
    const exec = freshExec();
    const w = await openJournalWriter(exec, { durability: "none" });
    await w.appendMany(Array.from({ length: 25_000 }, (_, i) => ({ type: "info", data: i })));
    const s = w.ioStats();
    await w.close();
    expect(s.batches).toBeGreaterThanOrEqual(3);
    expect(readFileSync(layoutOf(exec).journal, "utf8").split("\n").length - 1).toBe(25_000);
  });

  it("writes the sidecar every 1,000 events and on close, compact and in key order", async () => {
    const exec = freshExec();
    const w = await openJournalWriter(exec, { durability: "none", now: () => 1772736515931, random: () => 0.5 });
    for (let i = 0; i < 1000; i++) await w.append({ type: "info", data: i });
    const mid = readFileSync(layoutOf(exec).sidecar, "utf8");
    expect(mid).toBe(`{"schemaVersion":1,"eventSchemaVersion":2,"totalEvents":1000,"byteLength":${w.position().bytes},"lastEventId":"1772736515931-i"}`);
    await w.append({ type: "info", data: "last", id: "custom-id" });
    await w.close();
    expect(sidecarOf(exec)).toEqual({ schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 1001, byteLength: readFileSync(layoutOf(exec).journal).length, lastEventId: "custom-id" });
    expect(existsSync(layoutOf(exec).sidecarTmp)).toBe(false);
  });

  it("appendMany is all-or-nothing on validation", async () => {
    const exec = freshExec();
    const w = await openJournalWriter(exec);
    await expect(w.appendMany([{ type: "info", data: 1 }, { type: "pong", data: 2 }])).rejects.toMatchObject({ code: "CONNECTION_STATE_EVENT" });
    await expect(w.append({ type: "info" } as never)).rejects.toMatchObject({ code: "INVALID_EVENT" });
    await w.close();
    expect(readFileSync(layoutOf(exec).journal).length).toBe(0);
  });

  it("refuses appends after close with JOURNAL_CLOSED and close is idempotent", async () => {
    const w = await openJournalWriter(freshExec());
    const pending = w.append({ type: "info", data: 1 });
    await w.close();
    await expect(pending).resolves.toMatchObject({ line: 0 });
    await w.close();
    await expect(w.append({ type: "info", data: 2 })).rejects.toMatchObject({ code: "JOURNAL_CLOSED" });
  });

  it("continues physical line numbers after blank and corrupt lines", async () => {
    const exec = freshExec();
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    writeFileSync(layoutOf(exec).journal, '{"id":"1","timestamp":"t","type":"info","data":1}\n\nnot json\n');
    const w = await openJournalWriter(exec);
    expect(w.position()).toMatchObject({ lines: 3, events: 1, lastEventId: "1" });
    const a = await w.append({ type: "info", data: 2 });
    await w.close();
    expect(a.line).toBe(3);
    const r = await openPlainReader(exec);
    expect((await r.getLine(3))?.event.data).toBe(2);
    await r.close();
  });
});

describe("sidecar rules at open (format §2.5)", () => {
  async function journalWith(n: number): Promise<{ exec: string; bytes: number }> {
    const exec = freshExec();
    const w = await openJournalWriter(exec);
    await w.appendMany(Array.from({ length: n }, (_, i) => ({ type: "info", data: i })));
    await w.close();
    return { exec, bytes: readFileSync(layoutOf(exec).journal).length };
  }

  it("trusts a sidecar whose byteLength equals the file size", async () => {
    const { exec } = await journalWith(10);
    const w = await openJournalWriter(exec);
    expect(w.openReport.plan.counted).toBe("sidecar");
    expect(w.openReport.repair).toBeNull();
    expect(w.position().events).toBe(10);
    await w.close();
  });

  it("counts from byteLength and adds when the sidecar is smaller (a line-aligned prefix)", async () => {
    const { exec } = await journalWith(10);
    appendFileSync(layoutOf(exec).journal, '{"id":"x","timestamp":"t","type":"info","data":0}\n\n');
    const w = await openJournalWriter(exec);
    expect(w.openReport.plan.counted).toBe("sidecar-prefix");
    expect(w.position()).toMatchObject({ events: 11, lines: 12, lastEventId: "x" });
    await w.close();
    expect(sidecarOf(exec).totalEvents).toBe(11);
  });

  it.each([
    ["larger than the file", (s: string) => s.replace(/"byteLength":\d+/, '"byteLength":999999999')],
    ["malformed", () => "{not json"],
    ["with a wrong shape", () => '{"schemaVersion":1}'],
    ["not line-aligned", (s: string) => s.replace(/"byteLength":(\d+)/, (_m, n) => `"byteLength":${Number(n) - 3}`)],
  ])("recounts from 0 and rewrites a sidecar %s", async (_name, lie) => {
    const { exec, bytes } = await journalWith(10);
    const real = readFileSync(layoutOf(exec).sidecar, "utf8");
    writeFileSync(layoutOf(exec).sidecar, lie(real).replace(/"totalEvents":\d+/, '"totalEvents":5'));
    const w = await openJournalWriter(exec);
    expect(w.openReport.plan.counted).toBe("rescan");
    expect(w.openReport.repair?.sidecarWritten).toBe(true);
    expect(w.position().events).toBe(10);
    expect(sidecarOf(exec)).toMatchObject({ totalEvents: 10, byteLength: bytes });
    await w.close();
  });
});

describe("torn tail at open", () => {
  it("quarantines the fragment byte for byte, truncates to the last newline, reports it", async () => {
    const exec = freshExec();
    const w0 = await openJournalWriter(exec);
    await w0.appendMany([{ type: "info", data: 1 }, { type: "info", data: 2 }]);
    await w0.close();
    const clean = readFileSync(layoutOf(exec).journal);
    const fragment = Buffer.from([0x7b, 0x22, 0x69, 0xe2, 0x82]); // `{"i` + half a UTF-8 char
    appendFileSync(layoutOf(exec).journal, fragment);
    const w = await openJournalWriter(exec);
    expect(w.openReport.plan.tornTail).toEqual({ offset: clean.length, length: 5, quarantinePath: layoutOf(exec).tornFragment(clean.length) });
    expect(w.openReport.repair?.truncated).toBe(true);
    const a = await w.append({ type: "info", data: 3 });
    await w.close();
    expect(a).toMatchObject({ line: 2, offset: clean.length });
    expect(readFileSync(layoutOf(exec).tornFragment(clean.length)).equals(fragment)).toBe(true);
    expect(readFileSync(layoutOf(exec).journal).subarray(0, clean.length).equals(clean)).toBe(true);
  });

  it("keeps an earlier, different fragment at the same offset under torn-<offset>.1", async () => {
    const exec = freshExec();
    mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
    writeFileSync(layoutOf(exec).journal, '{"id":"1","timestamp":"t","type":"info","data":1}\n');
    const at = readFileSync(layoutOf(exec).journal).length;
    writeFileSync(layoutOf(exec).tornFragment(at), "older fragment");
    appendFileSync(layoutOf(exec).journal, "newer");
    const w = await openJournalWriter(exec);
    await w.close();
    expect(readFileSync(layoutOf(exec).tornFragment(at), "utf8")).toBe("older fragment");
    expect(readFileSync(layoutOf(exec).tornFragment(at, 1), "utf8")).toBe("newer");
  });
});
