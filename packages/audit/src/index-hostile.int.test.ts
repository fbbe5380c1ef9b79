// Issue 14 class 4: the index never answers from a stale copy, concurrent builds both finish,
// and a runaway query ends with a code instead of exhausting the heap.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { isJournalError, layoutOf, type JournalError } from "@hankweave-journal/core";
import { bundleCli } from "@hankweave-journal/journal/testing";
import { buildIndex } from "./index-build.js";
import { QUERY_MEMORY_BOUNDS_SQLITE, queryIndex, streamQuery } from "./index-query.js";
import { writeSyntheticExecution } from "./testing/synthetic.js";

/** The CLI of the sources, bundled once (a tsx start of the dev bin costs ~1.4 CPU s, its index worker ~0.9 more). */
let BIN = "";
beforeAll(async () => {
  BIN = await bundleCli();
}, 60_000);

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

  it("an endless recursive CTE ends with QUERY_TOO_LARGE at the row bound; rows stream before it; a slow row stream times out", async () => {
    const exec = path.join(root, "cte");
    writeSyntheticExecution(exec);
    await buildIndex(exec);
    let rows = 0;
    const sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c";
    expect(await codeOf(streamQuery(exec, sql, () => undefined, () => void rows++, { maxRows: 5000 }))).toBe("QUERY_TOO_LARGE");
    expect(rows).toBe(5000);
    expect(await codeOf(Promise.resolve().then(() => queryIndex(exec, sql, [], { maxRows: 5000 })))).toBe("QUERY_TOO_LARGE");
    expect(await codeOf(streamQuery(exec, sql, () => undefined, () => new Promise((r) => setTimeout(r, 1)), { timeoutMs: 1500 }))).toBe("QUERY_TIMEOUT");
    expect(queryIndex(exec, "SELECT count(*) FROM events").rows[0][0]).toBeGreaterThan(0);
  });

  it("a statement that never yields a row (count over an endless CTE) is killed at the timeout: QUERY_TIMEOUT with the elapsed time, within timeout + 2 s", async () => {
    const exec = path.join(root, "cte");
    const sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
    const started = Date.now();
    const err = await streamQuery(exec, sql, () => undefined, () => undefined, { timeoutMs: 1500 }).then(() => undefined, (e: unknown) => e);
    const took = Date.now() - started;
    expect(isJournalError(err, "QUERY_TIMEOUT")).toBe(true);
    expect((err as JournalError).details.elapsedMs).toBeGreaterThanOrEqual(1500);
    expect(took).toBeLessThan(1500 + 2000);
    // The normal path still answers, with blobs as Buffers and rows in order.
    const got: unknown[][] = [];
    let columns: string[] = [];
    expect(await streamQuery(exec, "SELECT x'00ff' AS b, 2 AS n UNION ALL SELECT x'01', 3", (c) => { columns = c; }, (r) => void got.push(r))).toBe(2);
    expect(columns).toEqual(["b", "n"]);
    expect(got).toEqual([[Buffer.from([0, 255]), 2], [Buffer.from([1]), 3]]);
    expect(Buffer.isBuffer(got[0][0])).toBe(true);
  });

  it.runIf(QUERY_MEMORY_BOUNDS_SQLITE)(QUERY_MEMORY_BOUNDS_SQLITE
    ? "a query that needs more memory than --max-memory ends with QUERY_TOO_LARGE (SQLite's memory and a huge row)"
    : "prlimit (util-linux), which bounds SQLite's memory, is absent: these tests cannot run", async () => {
    const exec = path.join(root, "cte");
    const limits = { maxMemoryMb: 128, timeoutMs: 20_000 };
    // SQLite allocates 400 MB inside one statement; then a 300 MB value must reach JavaScript.
    expect(await codeOf(streamQuery(exec, "SELECT length(zeroblob(400000000) || 'x')", () => undefined, () => undefined, limits))).toBe("QUERY_TOO_LARGE");
    expect(await codeOf(streamQuery(exec, "SELECT zeroblob(300000000)", () => undefined, () => undefined, limits))).toBe("QUERY_TOO_LARGE");
  });

});
