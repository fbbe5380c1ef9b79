import { appendFileSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { verifyExecution } from "./verify.js";
import { CONF, copyExecution, journalLines } from "./testing/plant.js";
import { conformancePresent } from "./testing/conformance-notice.js";

conformancePresent();

function codes(r: { findings: { code: string }[] }): string[] {
  return r.findings.map((f) => f.code);
}

function blobs(exec: string): string[] {
  const cas = layoutOf(exec).casDir;
  return readdirSync(cas).sort().flatMap((shard) => readdirSync(path.join(cas, shard)).sort().map((n) => path.join(cas, shard, n)));
}

describe.runIf(existsSync(CONF))("verify", () => {
  it("passes a conformance journal, cheap and deep (state.json equals the fold)", async () => {
    const exec = copyExecution("budget-loop-replay");
    const cheap = await verifyExecution(exec);
    expect(cheap.ok).toBe(true);
    expect(cheap.findings).toEqual([]);
    expect(cheap.checks.find((c) => c.name === "state")?.status).toBe("skipped");
    const deep = await verifyExecution(exec, { deep: true });
    expect(deep.ok).toBe(true);
    expect(deep.checks.find((c) => c.name === "state")).toMatchObject({ status: "ok" });
  });

  it("passes a dieted journal deep: manifest, every CAS blob, restore dry run, state", async () => {
    const exec = copyExecution("plan-gen-execution");
    await applyDiet(exec);
    const r = await verifyExecution(exec, { deep: true });
    expect(r.kind).toBe("dieted");
    expect(r.findings).toEqual([]);
    expect(r.checks.filter((c) => c.status === "ok").map((c) => c.name).sort()).toEqual(["cas-blobs", "journal", "manifest", "restore-dry-run", "state"]);
  });

  it("reports a corrupted CAS blob (deep: CAS_CORRUPT) and a wrong originalSha256 (deep: RESTORE_MISMATCH)", async () => {
    const exec = copyExecution("plan-gen-execution");
    await applyDiet(exec);
    const manifest = JSON.parse(readFileSync(layoutOf(exec).manifest, "utf8"));
    manifest.originalSha256 = "0".repeat(64);
    writeFileSync(layoutOf(exec).manifest, JSON.stringify(manifest));
    const r = await verifyExecution(exec, { deep: true });
    expect(codes(r)).toContain("RESTORE_MISMATCH");
    expect(r.ok).toBe(false);

    const exec2 = copyExecution("plan-gen-execution");
    await applyDiet(exec2);
    const [a, b] = blobs(exec2);
    writeFileSync(a, readFileSync(b)); // valid zstd, wrong body for a's name
    const r2 = await verifyExecution(exec2, { deep: true });
    expect(codes(r2)).toContain("CAS_CORRUPT");
    expect(r2.ok).toBe(false);
  });

  it("reports a sidecar that vouches for more bytes than the file, or for other counts", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    const size = statSync(layoutOf(exec).journal).size;
    const lines = journalLines(exec);
    const lastId = JSON.parse(lines[lines.length - 1]).id;
    writeFileSync(layoutOf(exec).sidecar, JSON.stringify({ schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 65, byteLength: size + 10, lastEventId: lastId }));
    expect(codes(await verifyExecution(exec))).toEqual(["SIDECAR_MISMATCH"]);
    writeFileSync(layoutOf(exec).sidecar, JSON.stringify({ schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 64, byteLength: size, lastEventId: lastId }));
    expect(codes(await verifyExecution(exec))).toEqual(["SIDECAR_MISMATCH"]);
    writeFileSync(layoutOf(exec).sidecar, JSON.stringify({ schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 65, byteLength: size, lastEventId: lastId }));
    const clean = await verifyExecution(exec);
    expect(clean.findings).toEqual([]);
    expect(clean.checks.find((c) => c.name === "sidecar")?.note).toBe("ok");
  });

  it("reports a torn tail and a corrupt line with their line numbers", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    const lines = journalLines(exec);
    lines[7] = "{not json";
    writeFileSync(layoutOf(exec).journal, lines.join("\n") + "\n");
    appendFileSync(layoutOf(exec).journal, '{"id":"torn');
    const r = await verifyExecution(exec);
    expect(r.findings.map((f) => `${f.code} ${f.line}`)).toEqual(["CORRUPT_LINE 7", "TORN_TAIL 65"]);
    expect(r.ok).toBe(false);
  });

  it("reports a state.json that differs from the fold (deep)", async () => {
    const exec = copyExecution("budget-loop-level-replay");
    const state = JSON.parse(readFileSync(layoutOf(exec).state, "utf8"));
    state.runs[0].codons[0].finalCost += 1;
    writeFileSync(layoutOf(exec).state, JSON.stringify(state, null, 2));
    expect(codes(await verifyExecution(exec))).toEqual([]);
    const r = await verifyExecution(exec, { deep: true });
    expect(codes(r)).toEqual(["STATE_MISMATCH"]);
    expect(JSON.stringify(r.findings[0].details)).toContain("finalCost");
  });
});

