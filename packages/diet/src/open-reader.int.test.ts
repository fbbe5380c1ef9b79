import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "./open-reader.js";
import { applyDiet } from "./diet.js";
import { applyExtDiet } from "./ext/ext-diet.js";
import { codeOf, finishedJournal, linesToBytes, rmExec, tempExec } from "./test-helpers.js";

// openReader over a dieted pair reads and parses journal.meta.json once (the kind and every check
// of the manifest from the same bytes: a one-line read of a cold process pays each extra read), and
// a missing, lying or half manifest still gets the same code as before.

// Every readFileSync of the suite's modules goes through this spy (counted per path).
vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const readFileSync = vi.fn(real.readFileSync);
  return { ...real, default: { ...real, readFileSync }, readFileSync };
});

const ORIGINAL = finishedJournal(["x".repeat(9000), "line one\nline two\n".repeat(300), "a body of some text ".repeat(100)], "RunCompleted", 30);
const ORIGINAL_LINES = ORIGINAL.toString("utf8").split("\n");
let ext: string;
let compat: string;

beforeAll(async () => {
  ext = tempExec(ORIGINAL);
  await applyExtDiet(ext, { force: true, workers: 0, blockTargetBytes: 4096, packFrameTargetBytes: 256 });
  compat = tempExec(ORIGINAL);
  await applyDiet(compat, { force: true });
});
afterAll(() => {
  rmExec(ext);
  rmExec(compat);
});

/** readFileSync calls on `path` while `f` runs. */
async function readsOf(path: string, f: () => Promise<void>): Promise<number> {
  const spy = vi.mocked(fs.readFileSync);
  const before = spy.mock.calls.length;
  await f();
  return spy.mock.calls.slice(before).filter((c) => c[0] === path).length;
}

/** A copy of the extended diet `ext` with its manifest replaced by `text` (or made a directory). */
function withManifest(text: string | null): string {
  const exec = tempExec();
  const l = layoutOf(exec);
  fs.copyFileSync(layoutOf(ext).dietedJournal, l.dietedJournal);
  if (text === null) fs.mkdirSync(l.manifest);
  else fs.writeFileSync(l.manifest, text);
  return exec;
}

async function openAndRead(exec: string): Promise<void> {
  const r = await openReader(exec);
  try {
    await linesToBytes(r);
  } finally {
    await r.close();
  }
}

describe("openReader: the manifest of a dieted pair", () => {
  it("is read once for an extended and for a compatible diet, and the line read is the original's", async () => {
    for (const exec of [ext, compat]) {
      const n = await readsOf(layoutOf(exec).manifest, async () => {
        const r = await openReader(exec);
        try {
          const rec = await r.getLine(7);
          expect(rec?.bytes.toString("utf8")).toBe(ORIGINAL_LINES[7]);
        } finally {
          await r.close();
        }
      });
      expect(n).toBe(1);
    }
  });

  it("keeps its codes when missing, not JSON, a directory, lying or with a malformed ext key", async () => {
    const text = fs.readFileSync(layoutOf(ext).manifest, "utf8");
    const m = JSON.parse(text) as Record<string, unknown> & { ext: Record<string, unknown> };
    const cases: [string | null, string][] = [
      [null, "NOT_A_REGULAR_FILE"],
      ["{\"schemaVersion\":1,", "MANIFEST_INVALID"],
      [JSON.stringify({ ...m, originalSha256: "nope" }), "MANIFEST_INVALID"],
      [JSON.stringify({ ...m, ext: { ...m.ext, lines: "many" } }), "MANIFEST_INVALID"],
      [JSON.stringify({ ...m, originalBytes: (m.originalBytes as number) + 1 }), "EXT_INDEX_INVALID"],
    ];
    for (const [t, code] of cases) {
      const exec = withManifest(t);
      try {
        expect(await codeOf(openAndRead(exec))).toBe(code);
        expect(fs.existsSync(layoutOf(exec).journal)).toBe(false);
      } finally {
        rmExec(exec);
      }
    }
    // Half a pair: only the manifest left.
    const half = withManifest(text);
    fs.rmSync(layoutOf(half).dietedJournal);
    expect(await codeOf(openAndRead(half))).toBe("HALF_PAIR");
    expect(fs.readFileSync(layoutOf(half).manifest, "utf8")).toBe(text);
    rmExec(half);
  });
});
