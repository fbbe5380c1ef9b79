import { existsSync, readFileSync, statSync, writeFileSync, appendFileSync } from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { auditExecution } from "./audit-run.js";
import { buildIndex } from "./index-build.js";
import { queryIndex } from "./index-query.js";
import { INDEX_TABLES } from "./index-schema.js";
import { CONF, copyExecution, journalLines } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";

const ORDER: Record<string, string> = {
  events: "line", transitions: "line", findings: "seq", runs: "run_seq", codon_attempts: "run_seq, idx", meta: "key",
};

/** Every table's rows, in a fixed order. */
function dump(exec: string): Record<string, unknown[]> {
  const db = new Database(layoutOf(exec).index, { readonly: true });
  try {
    // meta.fingerprint is the journal file's stat (inode, times): it differs between two copies by design.
    const where = (t: string): string => (t === "meta" ? " WHERE key != 'fingerprint'" : "");
    return Object.fromEntries(INDEX_TABLES.map((t) => [t, db.prepare(`SELECT * FROM ${t}${where(t)} ORDER BY ${ORDER[t]}`).all()]));
  } finally {
    db.close();
  }
}

function count(exec: string, sql: string): number {
  return queryIndex(exec, sql).rows[0][0] as number;
}

conformancePresent();

describe.runIf(existsSync(CONF))("the SQLite index", () => {
  it("has as many event rows as the reader yields events, and one transition row per state.transition", async () => {
    const exec = copyExecution("plan-gen-execution");
    const r = await buildIndex(exec);
    expect(r.mode).toBe("full");
    const reader = await openReader(exec);
    let events = 0;
    let transitions = 0;
    for await (const rec of reader.events()) {
      events += 1;
      if (rec.event.type === "state.transition") transitions += 1;
    }
    await reader.close();
    expect(count(exec, "SELECT count(*) FROM events")).toBe(events);
    expect(count(exec, "SELECT count(*) FROM transitions")).toBe(transitions);
    expect(transitions).toBe(2636);
    const audit = await auditExecution(exec);
    expect(count(exec, "SELECT count(*) FROM findings")).toBe(audit.findingList.length);
    expect(count(exec, "SELECT count(*) FROM codon_attempts")).toBe(audit.runs[0].attempts.length);
    expect(count(exec, "SELECT count(*) FROM transitions WHERE journaled_total_cost IS NOT recomputed_total_cost")).toBe(0);
    expect(count(exec, "SELECT sum(size + 1) FROM events")).toBe(statSync(layoutOf(exec).journal).size);
  });

  it("an incremental update after the journal grew (through a torn tail) equals a full rebuild", async () => {
    const full = copyExecution("plan-gen-execution");
    const lines = journalLines(full);
    const text = readFileSync(layoutOf(full).journal);
    await buildIndex(full);

    const inc = copyExecution("plan-gen-execution");
    const cut = Buffer.byteLength(lines.slice(0, 3000).join("\n") + "\n") + 50; // 50 bytes into line 3000: a torn tail
    writeFileSync(layoutOf(inc).journal, text.subarray(0, cut));
    const first = await buildIndex(inc);
    expect(first.mode).toBe("full");
    expect(count(inc, "SELECT count(*) FROM findings WHERE code = 'TORN_TAIL' AND line = 3000")).toBe(1);
    appendFileSync(layoutOf(inc).journal, text.subarray(cut));
    const second = await buildIndex(inc);
    expect(second.mode).toBe("incremental");
    expect(second.linesRead).toBe(lines.length - 3000);
    expect(second.bytesRead).toBe(text.length - (cut - 50));
    expect(dump(inc)).toEqual(dump(full));
  });

  it("does nothing when the journal is unchanged, and rebuilds fully when its prefix changed", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    await buildIndex(exec);
    const before = readFileSync(layoutOf(exec).index);
    const again = await buildIndex(exec);
    expect(again.mode).toBe("unchanged");
    expect(readFileSync(layoutOf(exec).index).equals(before)).toBe(true);
    const lines = journalLines(exec);
    const last = JSON.parse(lines[lines.length - 1]);
    last.data.resultingState.totalCost = 1;
    lines[lines.length - 1] = JSON.stringify(last);
    writeFileSync(layoutOf(exec).journal, lines.join("\n") + "\n" + lines[lines.length - 1] + "\n");
    const rebuilt = await buildIndex(exec);
    expect(rebuilt.mode).toBe("full");
    expect(rebuilt.reason).toBe("the last indexed line changed");
    expect(count(exec, "SELECT count(*) FROM findings WHERE code = 'RESULTING_STATE_MISMATCH'")).toBe(2);
  });

  it("refuses bad SQL and write statements with QUERY_INVALID and leaves the database byte-identical", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    await buildIndex(exec);
    const before = readFileSync(layoutOf(exec).index);
    for (const sql of [
      "SELEC * FROM events", "DELETE FROM events", "DROP TABLE events", "UPDATE events SET id = 'x'",
      "INSERT INTO meta VALUES ('a', 'b')", "PRAGMA journal_mode = WAL", "CREATE TABLE t (x)", "BEGIN",
      "ATTACH DATABASE '/tmp/x.sqlite' AS x", "VACUUM", "SELECT * FROM no_such_table",
    ]) {
      let code: string | undefined;
      try {
        queryIndex(exec, sql);
      } catch (e) {
        if (isJournalError(e)) code = e.code;
      }
      expect(code, sql).toBe("QUERY_INVALID");
    }
    expect(readFileSync(layoutOf(exec).index).equals(before)).toBe(true);
    expect(queryIndex(exec, "SELECT count(*) AS n FROM events").columns).toEqual(["n"]);
  });

  it("indexes a dieted journal to the same tables as the plain one (rebuilt when the kind changes, then unchanged)", async () => {
    const { applyDiet } = await import("@hankweave-journal/diet");
    const exec = copyExecution("plan-gen-execution");
    await buildIndex(exec);
    const plain = dump(exec);
    await applyDiet(exec);
    const r = await buildIndex(exec);
    expect(r).toMatchObject({ mode: "full", reason: "journal kind changed (plain → dieted)" });
    expect((await buildIndex(exec)).mode).toBe("unchanged");
    const dieted = dump(exec);
    for (const t of INDEX_TABLES) if (t !== "meta") expect(dieted[t], t).toEqual(plain[t]);
  });

  it("answers the three documented debugging queries", async () => {
    const exec = copyExecution("plan-gen-execution");
    await buildIndex(exec);
    const costliest = queryIndex(exec, "SELECT codon, attempt, outcome, cost FROM codon_attempts ORDER BY cost DESC LIMIT 3");
    expect(costliest.rows[0][0]).toBe("step-2-plan");
    expect(queryIndex(exec, "SELECT count(*) FROM codon_attempts WHERE outcome IN ('failed','crashed')").rows[0][0]).toBe(0);
    const failing = copyExecution("budget-on-exceeded-fail-replay");
    await buildIndex(failing);
    const failed = queryIndex(failing, "SELECT codon, attempt, failure_reason FROM codon_attempts WHERE outcome IN ('failed','crashed')");
    expect(failed.rows).toHaveLength(1);
    expect(String(failed.rows[0][2])).toMatch(/^unknown: Budget exceeded/);
    const gaps = queryIndex(exec, `SELECT line, codon, from_status || '→' || to_status AS edge,
      round((julianday(time) - julianday(lag(time) OVER (PARTITION BY run, codon ORDER BY line))) * 86400, 3) AS seconds
      FROM transitions WHERE type = 'CodonTransitioned' ORDER BY seconds DESC LIMIT 5`);
    expect(gaps.rows.length).toBe(5);
    expect(gaps.rows[0][3]).toBeGreaterThan(gaps.rows[4][3] as number);
  });
});
