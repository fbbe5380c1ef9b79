import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { sha256Hex } from "@hankweave-journal/cas";
import { DietedSource } from "./dieted-source.js";
import { readManifest } from "./manifest.js";
import { restoreJournal } from "./restore.js";
import { verifyDiet } from "./verify-diet.js";
import { codeOf, dietBytes, finishedJournal, rmExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

/** Bodies of 4–30 KB, some repeated, some with characters JSON escapes. */
function bodiesFor(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`# file ${i % 7}\n"quoted" \\ tab\t é ${"x".repeat(4096 + (i % 7) * 3000)}\n`);
  return out;
}

describe("restore fast paths", () => {
  it("yields frames without rewritten lines as the decompressed frame itself, and frames with many rewritten lines spliced exactly", async () => {
    // filler 400: the first frames hold only verbatim lines; a dense tail of bodies follows.
    const head = finishedJournal(bodiesFor(1), null, 400);
    const dense = finishedJournal(bodiesFor(40), "RunCompleted", 0);
    const original = Buffer.concat([head, dense]);
    const exec = await dietBytes(original, { frameTargetBytes: 2000 });
    made.push(exec);
    const layout = layoutOf(exec);
    const m = await readManifest(layout);
    const plain = m.frames!.filter((f) => f.rewritten.length === 0).length;
    const many = m.frames!.filter((f) => f.rewritten.length >= 2).length;
    expect(plain).toBeGreaterThan(2);
    expect(many).toBeGreaterThan(2);

    const src = await DietedSource.open(layout, m);
    try {
      const got: Buffer[] = [];
      let k = 0;
      for await (const parts of src.originalParts()) {
        if (m.frames![k].rewritten.length === 0) {
          expect(parts.length).toBe(1);
          expect(parts[0].equals(await src.framePointerBytes(k))).toBe(true);
        }
        got.push(...parts);
        k++;
      }
      expect(k).toBe(m.frames!.length);
      expect(Buffer.concat(got).equals(original)).toBe(true);
    } finally {
      await src.close();
    }
    expect((await verifyDiet(exec)).originalSha256).toBe(sha256Hex(original));
    const r = await restoreJournal(exec);
    expect(r.status).toBe("restored");
    expect(fs.readFileSync(layout.journal).equals(original)).toBe(true);
  });

  it("refuses (MANIFEST_MISMATCH) a rewritten line whose rehydrated length differs from the manifest, publishing nothing", async () => {
    const original = finishedJournal(bodiesFor(5), "RunCompleted", 3);
    const exec = await dietBytes(original, { frameTargetBytes: 16 * 1024 });
    made.push(exec);
    const layout = layoutOf(exec);
    const m = JSON.parse(fs.readFileSync(layout.manifest, "utf8"));
    const f = m.frames.find((x: { rewritten: unknown[] }) => x.rewritten.length > 0);
    f.rewritten[0][1] += 1;
    f.originalBytes += 1;
    m.originalBytes += 1;
    fs.writeFileSync(layout.manifest, JSON.stringify(m));
    expect(await codeOf(restoreJournal(exec))).toBe("MANIFEST_MISMATCH");
    expect(fs.existsSync(layout.journal)).toBe(false);
    expect(fs.existsSync(layout.restoreTmp)).toBe(false);
  });
});
