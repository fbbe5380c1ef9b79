import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { layoutOf, type RawLine } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { eventsFromRawLines } from "@hankweave-journal/journal";
import { AuditFold } from "./audit-fold.js";
import { buildIndex } from "./index-build.js";
import { INDEX_SCHEMA_VERSION, INDEX_TABLES, SCHEMA_INDEXES_SQL, SCHEMA_TABLES_SQL } from "./index-schema.js";
import { IndexWriter } from "./index-writer.js";
import { CONF, SMALL_JOURNALS, copyExecution, journalLines, plantDefects, writeJournal } from "./testing/plant.js";
import { journalFingerprint } from "./index-meta.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import { writeSyntheticExecution } from "./testing/synthetic.js";

const ORDER: Record<string, string> = {
  events: "line", transitions: "line", findings: "seq", runs: "run_seq", codon_attempts: "run_seq, idx", meta: "key",
};

/** Every row of every table with the SQLite storage class of each value, plus the schema (tables and indexes). */
function dump(file: string): Record<string, unknown> {
  const db = new Database(file, { readonly: true });
  try {
    const out: Record<string, unknown> = {
      schema: db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").raw().all(),
    };
    for (const t of INDEX_TABLES) {
      const cols = (db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name);
      // meta.fingerprint is the journal file's stat (inode, times): it differs between builds after a rewrite by design.
      const where = t === "meta" ? " WHERE key != 'fingerprint'" : "";
      out[t] = db.prepare(`SELECT *, ${cols.map((c) => `typeof(${c})`).join(", ")} FROM ${t}${where} ORDER BY ${ORDER[t]}`).raw().all();
    }
    return out;
  } finally {
    db.close();
  }
}

/**
 * The reference build: the reader's own line parse (`eventsFromRawLines`), the fold and the
 * single-thread `IndexWriter` in one transaction, the secondary indexes after — what `index`
 * did before its rows moved to a worker thread.
 */
async function referenceIndex(exec: string, file: string): Promise<void> {
  rmSync(file, { force: true });
  const db = new Database(file);
  db.exec(SCHEMA_TABLES_SQL);
  const writer = new IndexWriter(db);
  db.exec("BEGIN");
  const fold = new AuditFold(writer.sink());
  const reader = await openReader(exec);
  const seen = { line: -1, offset: -1, length: 0, bytes: 0 };
  async function* tap(): AsyncGenerator<RawLine> {
    for await (const raw of reader.lines()) {
      seen.bytes += raw.bytes.length + (raw.terminated ? 1 : 0);
      if (raw.terminated) Object.assign(seen, { line: raw.line, offset: raw.offset, length: raw.bytes.length + 1 });
      yield raw;
    }
  }
  try {
    for await (const rec of eventsFromRawLines(tap(), { onFinding: (f) => fold.finding(f) })) {
      fold.event({ line: rec.line, offset: rec.offset, size: rec.bytes.length, event: rec.event });
    }
  } finally {
    await reader.close();
  }
  writer.replaceRunsAndAttempts(fold.state, fold.lines);
  const journal = readFileSync(layoutOf(exec).journal);
  const last = seen.offset < 0 ? null : createHash("sha256").update(journal.subarray(seen.offset, seen.offset + seen.length)).digest("hex");
  const totals = fold.totals;
  writer.writeMeta({
    schemaVersion: INDEX_SCHEMA_VERSION, kind: reader.kind, journalBytes: seen.bytes, indexedBytes: seen.offset < 0 ? 0 : seen.offset + seen.length,
    nextLine: seen.line + 1, lastLineOffset: seen.offset, lastLineSha256: last, events: totals.events, transitions: totals.transitions,
    fold: fold.snapshot(),
    prefixSha256: reader.kind === "plain" ? createHash("sha256").update(journal.subarray(0, seen.offset < 0 ? 0 : seen.offset + seen.length)).digest("hex") : null,
    fingerprint: reader.kind === "plain" ? journalFingerprint(statSync(layoutOf(exec).journal, { bigint: true })) : null,
  });
  db.exec("COMMIT");
  db.exec(SCHEMA_INDEXES_SQL);
  db.close();
}

/**
 * Build the index of `exec` (full) with the default options and with tiny chunks parsed by the
 * main thread only, by the worker only and by both; every dump must equal the reference's.
 */
async function expectSameAsReference(exec: string): Promise<Record<string, unknown>> {
  const ref = path.join(path.dirname(exec), `${path.basename(exec)}.reference.sqlite`);
  await referenceIndex(exec, ref);
  const want = dump(ref);
  rmSync(ref, { force: true });
  let got: Record<string, unknown> = {};
  for (const opts of [{}, { chunkBytes: 700, parser: "main" }, { chunkBytes: 700, parser: "worker" }, { chunkBytes: 5000, parser: "both" }] as const) {
    await buildIndex(exec, { full: true, parseAhead: opts });
    got = dump(layoutOf(exec).index);
    for (const t of Object.keys(want)) expect(got[t], `${t} ${JSON.stringify(opts)}`).toEqual(want[t]);
  }
  return got;
}

function findingCodes(d: Record<string, unknown>): Set<string> {
  return new Set((d.findings as unknown[][]).map((r) => r[3] as string));
}

const NASTY_TIME = "2026-03-05T23:00:00.000Z";
/** Valid-but-odd and corrupt lines (escaped keys, duplicate keys, nested type keys, blank lines, bad JSON). */
const NASTY_LINES = [
  "", "   \t", ` {"id":"o1","timestamp":"${NASTY_TIME}","type":"info","data":{"codonId":"c\\u0031"}} `,
  `{"id":"o2","timestamp":"${NASTY_TIME}","type":"info","data":{"codonId":"a","codonId":"b"}}`,
  `{"id":"o3","timestamp":"${NASTY_TIME}","type":"info","data":{"codon\\u0049d":"esc"}}`,
  `{"id":"o4","timestamp":"${NASTY_TIME}","type":"info","data":1,"type":7}`,
  `{"id":"o5","timestamp":"${NASTY_TIME}","\\u0074ype":"state.transition","type":"info","data":{"type":"state.transition"}}`,
  `{"id":"o6","timestamp":"${NASTY_TIME}","type":"info","type":"state.transition","data":{"transition":{"type":"RunStarted"}}}`,
  `{"id":"o7","timestamp":"${NASTY_TIME}","type":"info"}`, `{"id":"o8","timestamp":"${NASTY_TIME}","type":"info","data":[1,2,]}`,
  `{"data":{"codonId":"late","nested":{"type":"x","id":"y"}},"type":"info","timestamp":"${NASTY_TIME}","id":"o9"}`,
  `{"id":"o10","timestamp":"not a time","type":"info","data":null}`,
  `{"id":"o1","timestamp":"2026-03-05T22:00:00.000Z","type":"info","data":{}}`,
  `{"id":"o11","timestamp":"${NASTY_TIME}","type":"state.transition","data":{"transitionType":"X"}}`,
  `[1,2,3]`, `{"id":"o12","timestamp":"${NASTY_TIME}","type":"h\\u00e9llo","data":{"codonId":null}}`,
  // Hot-template transitions (read without JSON.parse) and near misses (parsed): a reused id, an escape, non-ASCII, whitespace.
  hotCosts("o2", "r-nasty", "c-nasty"), hotCosts("o13", "r-nasty", "c\\u0041"), hotCosts("o14", "r-é", "c"),
  hotCosts("o15", "r-nasty", "c-nasty").replace('"costDelta":', '"costDelta": '),
  `{"id":"o16","timestamp":"${NASTY_TIME}","type":"state.transition","data":{"transitionType":"AssistantMessageCountUpdated","runId":"r-nasty","codonId":"c-nasty","transition":{"type":"AssistantMessageCountUpdated","data":{"runId":"r-nasty","codonId":"c-nasty","newCount":4}},"resultingState":{"currentRunId":null,"runCount":1,"totalCost":0.30000000000000004,"currentRunCost":1e-7}}}`,
];

/** A CostsIncremented line in the runtime's exact key order (the hot template). */
function hotCosts(id: string, run: string, codon: string): string {
  return `{"id":"${id}","timestamp":"${NASTY_TIME}","type":"state.transition","data":{"transitionType":"CostsIncremented","runId":"${run}","codonId":"${codon}",` +
    `"transition":{"type":"CostsIncremented","data":{"runId":"${run}","codonId":"${codon}","costDelta":0.12345678901234568,` +
    `"tokensDelta":{"inputTokens":10,"outputTokens":2,"cacheCreationTokens":0,"cacheReadTokens":5}}},` +
    `"resultingState":{"currentRunId":"${run}","runCount":2,"totalCost":1.2345678901234567,"currentRunCost":0.1}}}`;
}

describe("index build (worker thread) equals the single-thread reference, table by table", () => {
  it("on a synthetic execution with every outcome, and after incremental growth in steps", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "hw-index-fast-"));
    const exec = path.join(root, "exec");
    writeSyntheticExecution(exec, { repeat: 4, fillerPerAttempt: 3, fillerBytes: 300 });
    const full = await expectSameAsReference(exec);
    // Grow the journal in three steps (the middle one through a torn tail): incremental each time.
    const text = readFileSync(layoutOf(exec).journal);
    const cuts = [Math.floor(text.length * 0.3), Math.floor(text.length * 0.6) + 7, text.length];
    writeFileSync(layoutOf(exec).journal, "");
    rmSync(layoutOf(exec).index, { force: true });
    let from = 0;
    for (const cut of cuts) {
      appendFileSync(layoutOf(exec).journal, text.subarray(from, cut));
      from = cut;
      await buildIndex(exec, { parseAhead: { chunkBytes: 1000 } });
    }
    expect(dump(layoutOf(exec).index)).toEqual(full);
    rmSync(root, { recursive: true, force: true });
  });

  it("on odd, corrupt and non-UTF-8 lines and a missing final newline", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "hw-index-fast-"));
    const exec = path.join(root, "exec");
    writeSyntheticExecution(exec, { repeat: 1 });
    const j = layoutOf(exec).journal;
    appendFileSync(j, NASTY_LINES.join("\n") + "\n");
    appendFileSync(j, Buffer.concat([Buffer.from(`{"id":"u","timestamp":"${NASTY_TIME}","type":"info","data":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n{"id":"torn"')]));
    const d = await expectSameAsReference(exec);
    for (const code of ["CORRUPT_LINE", "INVALID_UTF8", "TORN_TAIL", "DUPLICATE_ID", "BAD_TIMESTAMP", "TIME_BACKWARDS", "MALFORMED_TRANSITION"]) {
      expect(findingCodes(d).has(code), code).toBe(true);
    }
    rmSync(root, { recursive: true, force: true });
  });

  it("on an empty journal and on one holding only a torn fragment", async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), "hw-index-fast-"));
    const exec = path.join(root, "exec");
    writeSyntheticExecution(exec, { repeat: 1 });
    writeFileSync(layoutOf(exec).journal, "");
    await expectSameAsReference(exec);
    writeFileSync(layoutOf(exec).journal, '{"id":"x","timestamp"');
    await expectSameAsReference(exec);
    rmSync(root, { recursive: true, force: true });
  });

  conformancePresent();

  it.runIf(existsSync(CONF))("on every conformance journal", async () => {
    const names = [...SMALL_JOURNALS, "plan-gen-execution"];
    for (const name of names) {
      const exec = copyExecution(name);
      await expectSameAsReference(exec);
      rmSync(path.dirname(exec), { recursive: true, force: true });
    }
  });

  it.runIf(existsSync(CONF))("on each planted-defect journal", async () => {
    const base = copyExecution("budget-loop-level-replay");
    const plants = plantDefects(journalLines(base));
    rmSync(path.dirname(base), { recursive: true, force: true });
    expect(Object.keys(plants).length).toBeGreaterThan(5);
    for (const [code, p] of Object.entries(plants)) {
      const exec = copyExecution("budget-loop-level-replay");
      writeJournal(exec, p.text);
      const d = await expectSameAsReference(exec).catch((e: Error) => {
        throw new Error(`${code}: ${e.message}`);
      });
      expect(findingCodes(d).has(p.code), code).toBe(true);
      rmSync(path.dirname(exec), { recursive: true, force: true });
    }
  });
});
