import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf, isSha256Hex } from "@hankweave-journal/core";
import { applyDiet } from "./diet.js";
import { openReader } from "./open-reader.js";
import { restoreJournal } from "./restore.js";
import { readManifest } from "./manifest.js";
import { copyExec, linesToBytes, rmExec } from "./test-helpers.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");
const PLAN_GEN = path.join(CONF, "plan-gen-execution");
const PLAN_GEN_SHA = "ca5db7e084ed9f86e5a5c82b5e6555ecfd64a5b2575ff3b5c7b306ab071c0830";

if (!fs.existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(fs.existsSync(CONF)).toBe(false);
  });
}

describe.runIf(fs.existsSync(CONF))("compatibility with the zstd CLI and an independent rehydration", () => {
  const exec = copyExec(PLAN_GEN);
  const l = layoutOf(exec);
  const original = fs.readFileSync(l.journal);
  afterAll(() => rmExec(exec));

  it("diets the plan-gen journal: 3 unique bodies ≥ 4096 bytes move to the CAS", async () => {
    expect(createHash("sha256").update(original).digest("hex")).toBe(PLAN_GEN_SHA);
    const r = await applyDiet(exec);
    expect(r.status).toBe("dieted");
    expect(r.originalSha256).toBe(PLAN_GEN_SHA);
    expect(r.bodies.unique).toBe(3);
    expect(fs.existsSync(l.journal)).toBe(false);
    const m = await readManifest(l);
    const text = fs.readFileSync(l.manifest, "utf8");
    expect(Object.keys(JSON.parse(text)).slice(0, 8)).toEqual([
      "schemaVersion", "dietVersion", "eventSchemaVersion", "totalEvents", "originalSha256", "originalBytes", "segments", "dietedAt",
    ]);
    expect(m.totalEvents).toBe(6467);
    expect(m.segments).toEqual([{ id: 0, events: 6467 }]);
  });

  it("zstd -d gives the pointer lines: the original lines except the rewritten ones", () => {
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", l.dietedJournal], { maxBuffer: 1 << 30 });
    const pl = pointer.toString("utf8").split("\n");
    const ol = original.toString("utf8").split("\n");
    expect(pl.length).toBe(ol.length);
    let differing = 0;
    for (let i = 0; i < ol.length; i++) {
      if (pl[i] === ol[i]) continue;
      differing++;
      expect(pl[i]).toContain('"contentRef":{"sha256":"');
    }
    expect(differing).toBe(4); // 3 file.updated bodies + 1 state.snapshot repeating one of them
  });

  it("an independent rehydration (JSON.parse + zstd -d of each blob) rebuilds bytes with the original SHA-256", async () => {
    const m = await readManifest(l);
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", l.dietedJournal], { maxBuffer: 1 << 30 }).toString("utf8");
    const rebuilt = pointer.split("\n").map((line) => {
      if (!line.includes('"contentRef"')) return line;
      const ev = JSON.parse(line);
      const fix = (o: Record<string, unknown>): Record<string, unknown> => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(o)) {
          const ref = v as { sha256?: string; ref?: string };
          if (k === "contentRef" && ref.ref === "cas" && isSha256Hex(ref.sha256)) {
            out.content = execFileSync("zstd", ["-d", "-c", "-q", l.casBlob(ref.sha256)]).toString("utf8");
          } else if (v && typeof v === "object" && !Array.isArray(v)) out[k] = fix(v as Record<string, unknown>);
          else out[k] = v;
        }
        return out;
      };
      return JSON.stringify(fix(ev));
    }).join("\n");
    expect(createHash("sha256").update(rebuilt).digest("hex")).toBe(m.originalSha256);
  });

  it("cat-like reads through openReader give the original bytes, then restore links them back", async () => {
    const reader = await openReader(exec);
    expect(reader.kind).toBe("dieted");
    expect((await linesToBytes(reader)).equals(original)).toBe(true);
    const info = await reader.info();
    expect(info.bytes).toBe(original.length);
    expect(info.storedBytes).toBeLessThan(original.length / 4);
    await reader.close();
    expect((await restoreJournal(exec)).status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
    expect(fs.existsSync(l.dietedJournal) && fs.existsSync(l.manifest)).toBe(true);
    expect((await restoreJournal(exec)).status).toBe("already-restored");
  });

  it("reads a foreign single-frame .zst without a seek table (as the reference runtime writes it)", async () => {
    const foreign = copyExec(exec);
    try {
      const fl = layoutOf(foreign);
      fs.rmSync(fl.journal);
      const pointer = execFileSync("zstd", ["-d", "-c", "-q", fl.dietedJournal], { maxBuffer: 1 << 30 });
      fs.writeFileSync(fl.dietedJournal, execFileSync("zstd", ["-3", "-c", "-q"], { input: pointer, maxBuffer: 1 << 30 }));
      const m = JSON.parse(fs.readFileSync(fl.manifest, "utf8"));
      delete m.frames;
      delete m.lines;
      delete m.bodies;
      delete m.endsWithNewline;
      fs.writeFileSync(fl.manifest, JSON.stringify(m));
      const reader = await openReader(foreign);
      expect((await linesToBytes(reader)).equals(original)).toBe(true);
      expect((await reader.getLine(3000))?.offset).toBe(original.subarray(0).toString("latin1").split("\n").slice(0, 3000).join("\n").length + 1);
      await reader.close();
      expect((await restoreJournal(foreign)).status).toBe("restored");
      expect(fs.readFileSync(fl.journal).equals(original)).toBe(true);
    } finally {
      rmExec(foreign);
    }
  });
});
