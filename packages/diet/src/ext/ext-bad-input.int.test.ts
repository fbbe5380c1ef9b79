import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { openReader } from "../open-reader.js";
import { restoreJournal } from "../restore.js";
import { verifyDiet } from "../verify-diet.js";
import { codeOf, finishedJournal, linesToBytes, rmExec, tempExec } from "../test-helpers.js";
import { applyExtDiet } from "./ext-diet.js";

// Damaged extended diets: each damage has its own stable code, from restore, verify and the
// reader alike, and nothing is lost (the damaged files are left as they were, no events.jsonl is
// published, no temp is left behind).

const BODIES = ["x".repeat(9000), "é".repeat(3000), "line one\nline two\n".repeat(300), "y".repeat(5000), "a body of some text ".repeat(100), "z".repeat(700)];
const ORIGINAL = finishedJournal(BODIES, "RunCompleted", 40);
let good: string;

beforeAll(async () => {
  good = tempExec(ORIGINAL);
  await applyExtDiet(good, { force: true, workers: 0, blockTargetBytes: 4096, packFrameTargetBytes: 256 });
});
afterAll(() => rmExec(good));

/** A copy of the good diet with its container changed by `damage`. */
function damaged(damage: (c: Buffer) => Buffer): string {
  const exec = tempExec();
  const g = layoutOf(good);
  const l = layoutOf(exec);
  fs.copyFileSync(g.manifest, l.manifest);
  fs.writeFileSync(l.dietedJournal, damage(Buffer.from(fs.readFileSync(g.dietedJournal))));
  return exec;
}

function footer(c: Buffer) {
  const f = c.subarray(c.length - 32);
  return { packTable: Number(f.readBigUInt64LE(0)), blockTable: Number(f.readBigUInt64LE(8)), frames: f.readUInt32LE(16), blocks: f.readUInt32LE(20) };
}

/** Every entry point refuses with `code`; the files are unchanged and nothing was published. */
async function expectRefused(exec: string, code: string): Promise<void> {
  const l = layoutOf(exec);
  const before = { zst: fs.readFileSync(l.dietedJournal), manifest: fs.readFileSync(l.manifest) };
  expect(await codeOf(restoreJournal(exec))).toBe(code);
  expect(await codeOf(verifyDiet(exec))).toBe(code);
  expect(await codeOf((async () => {
    const r = await openReader(exec);
    try {
      await linesToBytes(r);
    } finally {
      await r.close();
    }
  })())).toBe(code);
  expect(fs.existsSync(l.journal)).toBe(false);
  expect(fs.existsSync(l.restoreTmp)).toBe(false);
  expect(fs.readFileSync(l.dietedJournal).equals(before.zst)).toBe(true);
  expect(fs.readFileSync(l.manifest).equals(before.manifest)).toBe(true);
  rmExec(exec);
}

describe("extended diet: bad input", () => {
  it("the undamaged diet has several blocks and pack frames, and reads back", async () => {
    const c = fs.readFileSync(layoutOf(good).dietedJournal);
    expect(footer(c).blocks).toBeGreaterThan(2);
    expect(footer(c).frames).toBeGreaterThan(2);
    const r = await openReader(good);
    expect((await linesToBytes(r)).equals(ORIGINAL)).toBe(true);
    await r.close();
  });

  it("a truncated pack (the container cut inside its last pack frame): EXT_TRUNCATED", async () => {
    await expectRefused(damaged((c) => c.subarray(0, footer(c).packTable - 5)), "EXT_TRUNCATED");
  });

  it("a lying block index (a block claims one line more): EXT_INDEX_INVALID", async () => {
    await expectRefused(damaged((c) => {
      const at = footer(c).blockTable + 12;
      c.writeUInt32LE(c.readUInt32LE(at) + 1, at);
      return c;
    }), "EXT_INDEX_INVALID");
  });

  it("a lying pack index (a frame points past the tables): EXT_INDEX_INVALID", async () => {
    await expectRefused(damaged((c) => {
      const at = footer(c).packTable;
      c.writeBigUInt64LE(BigInt(footer(c).packTable), at);
      return c;
    }), "EXT_INDEX_INVALID");
  });

  it("a pack frame whose declared size is smaller than the frame: EXT_BODY_SIZE", async () => {
    await expectRefused(damaged((c) => {
      const at = footer(c).packTable + 12;
      c.writeUInt32LE(c.readUInt32LE(at) - 7, at);
      return c;
    }), "EXT_BODY_SIZE");
  });

  it("a flipped byte inside a block record: EXT_CORRUPT", async () => {
    await expectRefused(damaged((c) => {
      const f = footer(c);
      const rec = Number(c.readBigUInt64LE(f.blockTable));
      const len = c.readUInt32LE(f.blockTable + 8);
      c[rec + len - 3] ^= 0xff;
      return c;
    }), "EXT_CORRUPT");
  });

  it("a manifest whose ext key is malformed: MANIFEST_INVALID", async () => {
    const exec = damaged((c) => c);
    const l = layoutOf(exec);
    const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    m.ext.lines = "many";
    fs.writeFileSync(l.manifest, JSON.stringify(m));
    await expectRefused(exec, "MANIFEST_INVALID");
  });
});
