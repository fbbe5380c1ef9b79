// Issue 14 class 4: the index never answers from a stale copy, concurrent builds both finish,
// and a runaway query ends with a code instead of exhausting the heap.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { buildIndex } from "./index-build.js";
import { queryIndex, streamQuery } from "./index-query.js";
import { writeSyntheticExecution } from "./testing/synthetic.js";

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../cli/bin/hankweave-journal.js");

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    if (!isJournalError(e)) throw e;
    return e.code;
  }
}

describe("the index under hostile conditions", () => {
  const root = mkdtempSync(path.join(os.tmpdir(), "index-hostile-"));

  it("an edit of a middle line that keeps the file size is noticed: the next build is full and queries see the edit", async () => {
    const exec = path.join(root, "same-size");
    writeSyntheticExecution(exec);
    await buildIndex(exec);
    const j = layoutOf(exec).journal;
    const text = readFileSync(j, "utf8");
    const lines = text.split("\n");
    const mid = Math.floor(lines.length / 2);
    const i = lines.findIndex((l, k) => k >= mid && l.includes('"type":"assistant.action"'));
    const edited = lines[i].replace('"type":"assistant.action"', '"type":"assistant.actioX"');
    expect(edited.length).toBe(lines[i].length);
    lines[i] = edited;
    writeFileSync(j, lines.join("\n"));
    expect(readFileSync(j).length).toBe(Buffer.byteLength(text));
    const r = await buildIndex(exec);
    expect(r.mode).toBe("full");
    expect(queryIndex(exec, "SELECT count(*) FROM events WHERE type = 'assistant.actioX'").rows[0][0]).toBe(1);
    expect((await buildIndex(exec)).mode).toBe("unchanged");
  });

  it("two builds at once in one process both finish, and the index is complete", async () => {
    const exec = path.join(root, "concurrent");
    writeSyntheticExecution(exec, { repeat: 3 });
    const [a, b] = await Promise.all([buildIndex(exec), buildIndex(exec)]);
    expect([a.mode, b.mode].sort()).toEqual(["full", "unchanged"]);
    expect(b.events).toBe(a.events);
  });

  it("two index processes at once both exit 0 (no 'table meta already exists')", async () => {
    const exec = path.join(root, "concurrent-procs");
    writeSyntheticExecution(exec, { repeat: 6 });
    const run = (): Promise<{ code: number | null; err: string }> => new Promise((resolve) => {
      const c = spawn(process.execPath, [BIN, "index", exec], { stdio: ["ignore", "ignore", "pipe"] });
      let err = "";
      c.stderr.on("data", (d) => { err += d; });
      c.on("close", (code) => resolve({ code, err }));
    });
    const results = await Promise.all([run(), run(), run()]);
    for (const r of results) {
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
    }
    expect((await buildIndex(exec)).mode).toBe("unchanged");
  }, 120_000);

  it("an endless recursive CTE ends with QUERY_TOO_LARGE at the row bound; rows stream before it", async () => {
    const exec = path.join(root, "cte");
    writeSyntheticExecution(exec);
    await buildIndex(exec);
    let rows = 0;
    const sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c";
    expect(await codeOf(streamQuery(exec, sql, () => undefined, () => void rows++, { maxRows: 5000 }))).toBe("QUERY_TOO_LARGE");
    expect(rows).toBe(5000);
    expect(await codeOf(Promise.resolve().then(() => queryIndex(exec, sql, [], { maxRows: 5000 })))).toBe("QUERY_TOO_LARGE");
  });

  it("a long row-producing query times out (QUERY_TIMEOUT)", async () => {
    const exec = path.join(root, "heap");
    writeSyntheticExecution(exec);
    await buildIndex(exec);
    const slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c";
    expect(await codeOf(streamQuery(exec, slow, () => undefined, () => new Promise((r) => setTimeout(r, 1)), { timeoutMs: 200 }))).toBe("QUERY_TIMEOUT");
    expect(queryIndex(exec, "SELECT count(*) FROM events").rows[0][0]).toBeGreaterThan(0);
  });
});
