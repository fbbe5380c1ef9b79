import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { auditExecution } from "./audit-run.js";
import { CONF, SMALL_JOURNALS } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";
import * as path from "node:path";

conformancePresent();

describe.runIf(existsSync(CONF))("audit of the conformance journals", () => {
  it("reports zero errors and recomputes all 333 resultingStates of the five small journals exactly", async () => {
    let transitions = 0;
    let equal = 0;
    for (const name of SMALL_JOURNALS) {
      const a = await auditExecution(path.join(CONF, name));
      expect(a.findings.error, `${name}: ${JSON.stringify(a.findingList.filter((f) => f.severity === "error"))}`).toBe(0);
      expect(a.byCode.RESULTING_STATE_MISMATCH).toBeUndefined();
      transitions += a.rowList.length;
      for (const r of a.rowList) if (JSON.stringify(r.journaled) === JSON.stringify(r.recomputed)) equal += 1;
    }
    expect(transitions).toBe(333);
    expect(equal).toBe(333);
  });

  it("reports zero errors on plan-gen-execution and recomputes its 2,636 resultingStates exactly", async () => {
    const a = await auditExecution(path.join(CONF, "plan-gen-execution"));
    expect(a.findings.error).toBe(0);
    expect(a.rowList.length).toBe(2636);
    expect(a.rowList.filter((r) => JSON.stringify(r.journaled) === JSON.stringify(r.recomputed)).length).toBe(2636);
    // The runtime's own quirk: SentinelStatesUpdated under the loop's base id is a warning, not an error.
    expect(a.findingList.filter((f) => f.code === "UNKNOWN_CODON").map((f) => f.line)).toEqual([3628, 4676, 5380]);
  });

  it("gives every row its line, time, run, codon, edge and costs after the transition", async () => {
    const a = await auditExecution(path.join(CONF, "budget-loop-level-replay"));
    const completed = a.rowList.find((r) => r.line === 42);
    expect(completed).toMatchObject({
      transition: "CodonTransitioned", codon: "loop-codon#0", from: "running", to: "completed", edge: "running→completed", applied: true,
    });
    expect(completed?.codonCost).toBe(completed?.runCost);
    expect(a.rowList[0]).toMatchObject({ line: 0, transition: "RunStarted", edge: "RunStarted", codon: null, codonCost: null, runCost: 0 });
    const last = a.rowList[a.rowList.length - 1];
    expect(last.runCost).toBe(0.021692999999999997);
    expect(a.runs).toHaveLength(1);
    expect(a.runs[0].attempts.map((x) => `${x.codon}:${x.outcome}:${x.startLine}-${x.endLine}`)).toEqual([
      "loop-codon#0:completed:1-42", "post-loop-codon:completed:46-59",
    ]);
  });

  it("filters rows and findings by run, codon and line range without changing the fold", async () => {
    const exec = path.join(CONF, "budget-loop-level-replay");
    const all = await auditExecution(exec);
    const byCodon = await auditExecution(exec, { codon: "post-loop-codon" });
    expect(byCodon.rowList.length).toBe(all.rowList.filter((r) => r.codon === "post-loop-codon").length);
    expect(byCodon.rowList.every((r) => r.codon === "post-loop-codon")).toBe(true);
    const ranged = await auditExecution(exec, { fromLine: 40, toLine: 50 });
    expect(ranged.rowList.map((r) => r.line)).toEqual(all.rowList.filter((r) => r.line >= 40 && r.line <= 50).map((r) => r.line));
    expect(ranged.rowList).toEqual(all.rowList.filter((r) => r.line >= 40 && r.line <= 50));
    const none = await auditExecution(exec, { run: "other" });
    expect(none.rowList).toEqual([]);
  });
});

describe.runIf(existsSync(CONF))("audit of a dieted journal", () => {
  it("gives the same rows and findings as the plain journal (plan-gen, bodies moved to the CAS)", async () => {
    const { applyDiet } = await import("@hankweave-journal/diet");
    const { copyExecution } = await import("./testing/plant.js");
    const exec = copyExecution("plan-gen-execution");
    const plain = await auditExecution(exec);
    const diet = await applyDiet(exec);
    expect(diet.bodies.moved).toBeGreaterThan(0);
    const dieted = await auditExecution(exec);
    expect(plain.kind).toBe("plain");
    expect(dieted.kind).toBe("dieted");
    expect(dieted.rowList).toEqual(plain.rowList);
    expect(dieted.findingList).toEqual(plain.findingList);
    expect(dieted.runs).toEqual(plain.runs);
  });
});
