import { appendFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet, openReader } from "@hankweave-journal/diet";
import { eventsFromRawLines } from "@hankweave-journal/journal";
import { describe, expect, it } from "vitest";
import { AuditFold } from "./audit-fold.js";
import { IndexWorker } from "./index-worker.js";
import { foldWithParseAhead, type ParseAheadOptions } from "./parse-ahead.js";
import { CONF, SMALL_JOURNALS, copyExecution, journalLines, plantDefects, writeJournal } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import { writeSyntheticExecution } from "./testing/synthetic.js";

type Mode = "slow" | ParseAheadOptions;

/**
 * Everything a fold reports, fed through the reader's own parse (slow) or through
 * `foldWithParseAhead` (the reader's shared raw chunks) with the given parse-ahead options.
 */
async function foldOutput(exec: string, mode: Mode): Promise<unknown[]> {
  const out: unknown[] = [];
  const fold = new AuditFold({ event: (e) => void out.push(["event", e]), row: (r) => void out.push(["row", r]), finding: (f) => void out.push(["finding", f]) });
  const reader = await openReader(exec);
  try {
    if (mode === "slow") {
      // The reader's own line-by-line parse (recordOfLine per raw line, findings in line order).
      for await (const rec of eventsFromRawLines(reader.lines(), { onFinding: (f) => fold.finding(f) })) {
        fold.event({ line: rec.line, offset: rec.offset, size: rec.bytes.length, event: rec.event });
      }
    } else {
      const worker = new IndexWorker(null);
      try {
        const seen = { line: -1, offset: -1, length: 0, count: 0, bytes: 0 };
        await foldWithParseAhead(fold, worker, reader, { offset: 0, line: 0 }, seen, mode);
      } finally {
        await worker.terminate();
      }
    }
  } finally {
    await reader.close();
  }
  out.push(["state", fold.snapshot()]);
  return out;
}

const MODES: Mode[] = [{}, { chunkBytes: 600, parser: "main" }, { chunkBytes: 600, parser: "worker" }, { chunkBytes: 3000, parser: "both" }];

async function expectSame(exec: string): Promise<{ codes: string[] }> {
  const slow = await foldOutput(exec, "slow");
  for (const mode of MODES) {
    const fast = await foldOutput(exec, mode);
    expect(fast.length, JSON.stringify(mode)).toBe(slow.length);
    expect(fast, JSON.stringify(mode)).toEqual(slow);
  }
  const codes = slow.filter((x) => (x as unknown[])[0] === "finding").map((x) => ((x as unknown[])[1] as { code: string }).code);
  return { codes };
}

describe("the parse-ahead fold (each parser, tiny chunks) gives the fold exactly what the reader's line parse gives it", () => {
  it("on a synthetic execution with every outcome", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "hw-feed-"));
    writeSyntheticExecution(exec, { repeat: 3, fillerPerAttempt: 3, fillerBytes: 300 });
    await expectSame(exec);
    rmSync(exec, { recursive: true, force: true });
  });

  it("on odd but valid lines and on corrupt ones (blank, whitespace, escapes, duplicate keys, bad UTF-8, torn tail)", async () => {
    const exec = mkdtempSync(path.join(os.tmpdir(), "hw-feed-odd-"));
    writeSyntheticExecution(exec, { repeat: 1 });
    const j = layoutOf(exec).journal;
    const t = "2026-03-05T23:00:00.000Z";
    appendFileSync(j, [
      "", "   \t", ` {"id":"o1","timestamp":"${t}","type":"info","data":{"codonId":"c\\u0031"}} `,
      `{"id":"o2","timestamp":"${t}","type":"info","data":{"codonId":"a","codonId":"b"}}`,
      `{"id":"o3","timestamp":"${t}","type":"info","data":{"codon\\u0049d":"esc"}}`,
      `{"id":"o4","timestamp":"${t}","type":"info","data":1,"type":7}`,
      `{"id":"o5","timestamp":"${t}","type":"info","data":{"x":"tab\there"}}`,
      `{"id":"o6","timestamp":"${t}","type":"info"}`, `{"id":"o7","timestamp":"${t}","type":"info","data":[1,2,]}`,
      `{"data":{"codonId":"late"},"type":"info","timestamp":"${t}","id":"o8"}`, `{"id":"o9","timestamp":"not a time","type":"info","data":null}`,
      `{"id":"o1","timestamp":"2026-03-05T22:00:00.000Z","type":"info","data":{}}`,
    ].join("\n") + "\n");
    appendFileSync(j, Buffer.concat([Buffer.from(`{"id":"u","timestamp":"${t}","type":"info","data":"`), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n{"id":"torn"')]));
    const r = await expectSame(exec);
    expect(new Set(r.codes)).toEqual(new Set(["CORRUPT_LINE", "INVALID_UTF8", "TORN_TAIL", "DUPLICATE_ID", "BAD_TIMESTAMP", "TIME_BACKWARDS"]));
    // The same journal dieted: the fold reads the dieted reader's chunks (rehydrated bytes).
    const plain = await foldOutput(exec, "slow");
    await applyDiet(exec, { force: true });
    expect((await openReader(exec).then(async (rd) => [rd.kind, await rd.close()]))[0]).toBe("dieted");
    expect(await foldOutput(exec, {})).toEqual(plain);
    expect(await foldOutput(exec, { chunkBytes: 600, parser: "main" })).toEqual(plain);
    rmSync(exec, { recursive: true, force: true });
  });

  conformancePresent();

  it.runIf(existsSync(CONF))("on every conformance journal", async () => {
    const names = [...SMALL_JOURNALS, "plan-gen-execution"];
    expect(names.length).toBe(6);
    for (const name of names) await expectSame(path.join(CONF, name));
  });

  it.runIf(existsSync(CONF))("on each planted-defect journal", async () => {
    const base = copyExecution("budget-loop-level-replay");
    const plants = plantDefects(journalLines(base));
    expect(Object.keys(plants).length).toBeGreaterThan(5);
    for (const [code, p] of Object.entries(plants)) {
      const exec = copyExecution("budget-loop-level-replay");
      writeJournal(exec, p.text);
      await expectSame(exec).catch((e: Error) => {
        throw new Error(`${code}: ${e.message}`);
      });
    }
  });
});
