import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { auditExecution } from "./audit-run.js";
import { CONF, copyExecution, journalLines, plantDefects, writeJournal } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";

const BASE = "budget-loop-level-replay";

conformancePresent();

describe.runIf(existsSync(CONF))("audit of journals with one planted defect", async () => {
  const pristine = existsSync(CONF) ? copyExecution(BASE) : "";
  const baseline = existsSync(CONF) ? await auditExecution(pristine) : null;
  const lines = existsSync(CONF) ? journalLines(pristine) : [];
  const plants = existsSync(CONF) ? plantDefects(lines) : {};

  it("the pristine copy has only info findings (the runtime's no-op CheckpointCreated)", () => {
    expect(baseline?.findingList.map((f) => `${f.severity} ${f.code} ${f.line}`)).toEqual([
      "info NO_TARGET_RECORD 41", "info NO_TARGET_RECORD 58",
    ]);
  });

  for (const code of [
    "INVALID_TRANSITION", "MISSING_METADATA", "UNKNOWN_RUN", "RESULTING_STATE_MISMATCH", "DUPLICATE_ID", "TIME_BACKWARDS",
    "CORRUPT_LINE", "TORN_TAIL", "EVENT_AFTER_RUN_END", "DUPLICATE_ACTIVE_CODON",
  ]) {
    it(`reports exactly ${code} at the planted line`, async () => {
      const p = plants[code];
      const exec = copyExecution(BASE);
      writeJournal(exec, p.text);
      const a = await auditExecution(exec);
      const got = a.findingList.map((f) => `${f.code} ${f.line}`);
      const shift = (l: number): number => (p.insertedAt !== null && l >= p.insertedAt ? l + p.shiftBy : l);
      const expected = [...(baseline?.findingList ?? []).map((f) => `${f.code} ${shift(f.line)}`), `${p.code} ${p.line}`];
      expect(got.sort()).toEqual(expected.sort());
    });
  }

  it("says by how much a resultingState differs (field, journaled, recomputed, delta)", async () => {
    const exec = copyExecution(BASE);
    writeJournal(exec, plants.RESULTING_STATE_MISMATCH.text);
    const a = await auditExecution(exec);
    const f = a.findingList.find((x) => x.code === "RESULTING_STATE_MISMATCH");
    const diffs = f?.details?.diffs as { field: string; journaled: number; recomputed: number; delta: number }[];
    expect(diffs).toHaveLength(1);
    expect(diffs[0].field).toBe("totalCost");
    expect(diffs[0].delta).toBeCloseTo(0.5, 12);
    expect(diffs[0].journaled - diffs[0].recomputed).toBe(diffs[0].delta);
    expect(f?.severity).toBe("error");
  });

  it("fails (error severity) on the error codes and passes on warnings only", async () => {
    const severities: Record<string, string> = {};
    for (const [code, p] of Object.entries(plants)) {
      const exec = copyExecution(BASE);
      writeJournal(exec, p.text);
      const a = await auditExecution(exec);
      severities[code] = a.findingList.find((f) => f.code === code)?.severity ?? "none";
    }
    expect(severities).toEqual({
      INVALID_TRANSITION: "error", MISSING_METADATA: "error", UNKNOWN_RUN: "error", RESULTING_STATE_MISMATCH: "error",
      DUPLICATE_ID: "warning", TIME_BACKWARDS: "warning", CORRUPT_LINE: "error", TORN_TAIL: "warning",
      EVENT_AFTER_RUN_END: "error", DUPLICATE_ACTIVE_CODON: "error",
    });
  });
});
