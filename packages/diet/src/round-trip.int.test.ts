import * as fs from "node:fs";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { decompressZstd } from "@hankweave-journal/cas";
import { applyDiet } from "./diet.js";
import { openDietedReader } from "./dieted-reader.js";
import { restoreJournal } from "./restore.js";
import { readManifest } from "./manifest.js";
import { kindOfManifest, type DietKind } from "./diet-kind.js";
import { journalArb } from "./journal-arbitrary.js";
import { linesToBytes, rmExec, tempExec } from "./test-helpers.js";
import { readSidecarStatus, writeSidecar } from "@hankweave-journal/journal";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

describe("diet round trip (property)", () => {
  it("restore(diet(j)) (in-thread or by workers) and the dieted reader give back j byte for byte; moves exactly the provable bodies", async () => {
    await fc.assert(
      fc.asyncProperty(journalArb, fc.constantFrom<DietKind>("compatible", "seekable") /* extended: ext/ext-round-trip.int.test.ts */, fc.constantFrom(200, 6000, 2 * 1024 * 1024), fc.constantFrom(0, 1, 2), fc.boolean(), async (j, kind, frameTargetBytes, workers, sidecar) => {
        const exec = tempExec(j.bytes);
        made.push(exec);
        const l = layoutOf(exec);
        // A trusted sidecar: the scan counts no events and takes its fast path for short lines.
        if (sidecar) await writeSidecar(exec, { schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 0, byteLength: j.bytes.length, lastEventId: null }, { durability: "none" });
        if (sidecar) expect((await readSidecarStatus(exec, j.bytes.length)).status).toBe("ok");
        const r = await applyDiet(exec, { force: true, kind, frameTargetBytes });
        expect(r.originalBytes).toBe(j.bytes.length);
        expect(fs.existsSync(l.journal)).toBe(false);
        const m = await readManifest(l);
        expect(m.dietVersion).toBe(1);
        expect(kindOfManifest(m)).toBe(kind);
        expect(r.kind).toBe(kind);
        // The stored sizes are the files' (every blob of this fresh CAS is one the diet references).
        const blobSizes = fs.existsSync(l.casDir)
          ? fs.readdirSync(l.casDir).flatMap((s) => fs.readdirSync(`${l.casDir}/${s}`).map((f) => fs.statSync(`${l.casDir}/${s}/${f}`).size))
          : [];
        expect(r.stored.casBytes).toBe(blobSizes.reduce((x, y) => x + y, 0));
        expect(r.stored.totalBytes).toBe(r.stored.casBytes + r.stored.manifestBytes + fs.statSync(l.dietedJournal).size);

        // Which lines stayed verbatim: compare the pointer journal with the original lines.
        const pointer = await decompressZstd(fs.readFileSync(l.dietedJournal), { maxBytes: 1 << 30 });
        const pointerLines = pointer.toString("latin1").split("\n");
        const moved = j.lines.filter((x) => x.compatible === "move").length;
        let rewritten = 0;
        j.lines.forEach((x, i) => {
          const same = pointerLines[i] === x.bytes.toString("latin1");
          if (x.compatible === "keep") expect(same).toBe(true);
          if (x.compatible === "move") expect(same).toBe(false);
          if (!same) rewritten++;
        });
        expect(rewritten).toBe(moved);

        const reader = await openDietedReader(exec);
        try {
          expect((await linesToBytes(reader)).equals(j.bytes)).toBe(true);
        } finally {
          await reader.close();
        }
        if (sidecar) {
          // The same index and pointer bytes as the scan that counts every line (no sidecar).
          const other = tempExec(j.bytes);
          made.push(other);
          await applyDiet(other, { force: true, kind, frameTargetBytes });
          const m2 = await readManifest(layoutOf(other));
          expect(m2.frames).toEqual(m.frames);
          expect(m2.lines).toBe(m.lines);
          expect((await decompressZstd(fs.readFileSync(layoutOf(other).dietedJournal), { maxBytes: 1 << 30 })).equals(pointer)).toBe(true);
          rmExec(other);
        }
        const restored = await restoreJournal(exec, { workers });
        expect(restored.status).toBe("restored");
        expect(fs.readFileSync(l.journal).equals(j.bytes)).toBe(true);
        rmExec(exec);
      }),
      { numRuns: 40 },
    );
  });
});
