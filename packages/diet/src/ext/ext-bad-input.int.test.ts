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

describe("extended diet: a lying cursor snapshot", () => {
  // One block of some 400 lines: three snapshots (lines 128, 256, 384).
  const LONG = finishedJournal(BODIES, "RunCompleted", 400);
  let one: string;
  beforeAll(async () => {
    one = tempExec(LONG);
    await applyExtDiet(one, { force: true, workers: 0, blockTargetBytes: 1 << 22, packFrameTargetBytes: 4096 });
  });
  afterAll(() => rmExec(one));

  /** The container with block `k`'s SNAP stream (stream 9) replaced by `lie(values)`; later offsets moved to fit. */
  async function withSnap(lie: (values: string[]) => string[]): Promise<string> {
    const { compress, decompress } = await import("@mongodb-js/zstd");
    const c = fs.readFileSync(layoutOf(one).dietedJournal);
    const f = footer(c);
    const at = Number(c.readBigUInt64LE(f.blockTable));
    const len = c.readUInt32LE(f.blockTable + 8);
    const rec = c.subarray(at, at + len);
    const S = rec.readUInt32LE(4);
    let pos = 8 + 8 * S;
    const streams: Buffer[] = [];
    for (let s = 0; s < S; s++) {
      streams.push(rec.subarray(pos, pos + rec.readUInt32LE(8 + 8 * s)));
      pos += rec.readUInt32LE(8 + 8 * s);
    }
    const values = Buffer.from(await decompress(streams[9])).toString("utf8").split("\n");
    values.pop();
    const raw = Buffer.from(`${lie(values).join("\n")}\n`);
    streams[9] = Buffer.from(await compress(raw, 9));
    const headNew = Buffer.from(rec.subarray(0, 8 + 8 * S));
    headNew.writeUInt32LE(streams[9].length, 8 + 8 * 9);
    headNew.writeUInt32LE(raw.length, 12 + 8 * 9);
    const recNew = Buffer.concat([headNew, ...streams]);
    const shift = recNew.length - len;
    const tables = Buffer.from(c.subarray(f.packTable, c.length - 32));
    for (let k = 0; k < f.frames; k++) {
      const o = Number(tables.readBigUInt64LE(24 * k));
      if (o > at) tables.writeBigUInt64LE(BigInt(o + shift), 24 * k);
    }
    for (let k = 0; k < f.blocks; k++) {
      const e = 24 * f.frames + 40 * k;
      const o = Number(tables.readBigUInt64LE(e));
      if (o > at) tables.writeBigUInt64LE(BigInt(o + shift), e);
      if (o === at) tables.writeUInt32LE(recNew.length, e + 8);
    }
    const foot = Buffer.from(c.subarray(c.length - 32));
    foot.writeBigUInt64LE(BigInt(f.packTable + shift), 0);
    foot.writeBigUInt64LE(BigInt(f.blockTable + shift), 8);
    const exec = tempExec();
    const l = layoutOf(exec);
    fs.copyFileSync(layoutOf(one).manifest, l.manifest);
    fs.writeFileSync(l.dietedJournal, Buffer.concat([c.subarray(0, at), recNew, c.subarray(at + len, f.packTable), tables, foot]));
    return exec;
  }

  /** Version 3's SNAP: line v = value v of every snapshot, comma separated (deltas); `f` changes snapshot j of value v. */
  const change = (v: string[], value: number, f: (d: string[]) => string[]) => v.map((x, i) => (i === value ? f(x.split(",")).join(",") : x));

  it("the undamaged one-block diet has snapshots, and an unchanged rewrite still reads back", async () => {
    let values: string[] = [];
    const exec = await withSnap((v) => {
      values = v;
      return v;
    });
    // floor((lines − 1) / 128) snapshots; one line per value: 11 + (the block's columns) lines.
    const snaps = Math.floor((JSON.parse(fs.readFileSync(layoutOf(exec).manifest, "utf8")).ext.lines - 1) / 128);
    expect(snaps).toBeGreaterThanOrEqual(3);
    expect(values.length).toBeGreaterThan(11);
    expect(values.every((x) => x.split(",").length === snaps)).toBe(true);
    const r = await openReader(exec);
    expect((await linesToBytes(r)).equals(LONG)).toBe(true);
    expect((await r.getLine(300))?.line).toBe(300);
    await r.close();
    rmExec(exec);
  });

  it("a snapshot whose ID position is shifted by one byte: EXT_SNAPSHOT_INVALID from restore, verify, a full read and a one-line read", async () => {
    const exec = await withSnap((v) => change(v, 3, (d) => [String(Number(d[0]) + 1), ...d.slice(1)]));
    const r = await openReader(exec);
    expect(await codeOf(r.getLine(200))).toBe("EXT_SNAPSHOT_INVALID");
    await r.close();
    await expectRefused(exec, "EXT_SNAPSHOT_INVALID");
  });

  it("a snapshot whose ROWS position is shifted by one byte (a one-line read) or whose line offset is off by one (a whole block): EXT_SNAPSHOT_INVALID", async () => {
    const rowsLie = await withSnap((v) => change(v, 8, (d) => [String(Number(d[0]) + 1), ...d.slice(1)]));
    const r = await openReader(rowsLie);
    expect(await codeOf(r.getLine(200))).toBe("EXT_SNAPSHOT_INVALID");
    await r.close();
    await expectRefused(rowsLie, "EXT_SNAPSHOT_INVALID");
    await expectRefused(await withSnap((v) => change(v, 10, (d) => [...d.slice(0, -1), String(Number(d[d.length - 1]) + 1)])), "EXT_SNAPSHOT_INVALID");
  });

  it("a SNAP stream with one value missing, or one value line missing: EXT_SNAPSHOT_INVALID", async () => {
    await expectRefused(await withSnap((v) => change(v, v.length - 1, (d) => d.slice(0, -1))), "EXT_SNAPSHOT_INVALID");
    const lineMissing = await withSnap((v) => v.slice(0, -1));
    const r = await openReader(lineMissing);
    expect(await codeOf(r.getLine(300))).toBe("EXT_SNAPSHOT_INVALID");
    await r.close();
    await expectRefused(lineMissing, "EXT_SNAPSHOT_INVALID");
  });
});

describe("extended diet: version-1 and version-2 containers (before this format) are still read", () => {
  /**
   * The container of `src` rewritten as version 2 (META one JSON object, SNAP row-major without
   * the ROWS/LINELEN/offset values) or version 1 (also no SNAP stream: columns from stream 9).
   */
  async function downgrade(c: Buffer, version: 1 | 2): Promise<Buffer> {
    const { compress, decompress } = await import("@mongodb-js/zstd");
    const unz = async (b: Buffer) => (b.length === 0 ? Buffer.alloc(0) : Buffer.from(await decompress(b)));
    const z = async (b: Buffer) => (b.length === 0 ? b : Buffer.from(await compress(b, 9)));
    const f = footer(c);
    // Every record and frame in file order.
    const items: { table: number; at: number; len: number; record: boolean }[] = [];
    for (let k = 0; k < f.frames; k++) {
      const e = f.packTable + 24 * k;
      items.push({ table: e, at: Number(c.readBigUInt64LE(e)), len: c.readUInt32LE(e + 8), record: false });
    }
    for (let k = 0; k < f.blocks; k++) {
      const e = f.blockTable + 40 * k;
      items.push({ table: e, at: Number(c.readBigUInt64LE(e)), len: c.readUInt32LE(e + 8), record: true });
    }
    items.sort((x, y) => x.at - y.at);
    const parts: Buffer[] = [Buffer.from(c.subarray(0, 8))];
    parts[0].writeUInt32LE(version, 4);
    const tables = Buffer.from(c.subarray(f.packTable, c.length - 32));
    let at = 8;
    for (const it of items) {
      let bytes = c.subarray(it.at, it.at + it.len);
      if (it.record) {
        const S = bytes.readUInt32LE(4);
        let pos = 8 + 8 * S;
        const raw: Buffer[] = [];
        for (let s = 0; s < S; s++) {
          const n = bytes.readUInt32LE(8 + 8 * s);
          raw.push(await unz(bytes.subarray(pos, pos + n)));
          pos += n;
        }
        const metaLines = raw[0].toString("utf8").split("\n").slice(0, -1);
        raw[0] = Buffer.from(JSON.stringify({ cols: JSON.parse(metaLines[0]), shapes: metaLines.slice(1).map((x) => JSON.parse(x)) }));
        const byValue = raw[9].length === 0 ? [] : raw[9].toString("utf8").split("\n").slice(0, -1).map((x) => x.split(","));
        const kept = byValue.filter((_, v) => v < 8 || v > 10);
        const rowMajor: string[] = [];
        for (let j = 0; j < (kept[0]?.length ?? 0); j++) for (const d of kept) rowMajor.push(d[j]);
        raw[9] = rowMajor.length === 0 ? Buffer.alloc(0) : Buffer.from(`${rowMajor.join("\n")}\n`);
        const keep = version === 1 ? raw.filter((_, s) => s !== 9) : raw;
        const zs = await Promise.all(keep.map(z));
        const head = Buffer.alloc(8 + 8 * keep.length);
        head.writeUInt32LE(bytes.readUInt32LE(0), 0);
        head.writeUInt32LE(keep.length, 4);
        keep.forEach((r, i) => {
          head.writeUInt32LE(zs[i].length, 8 + 8 * i);
          head.writeUInt32LE(r.length, 12 + 8 * i);
        });
        bytes = Buffer.concat([head, ...zs]);
      }
      const t = it.table - f.packTable;
      tables.writeBigUInt64LE(BigInt(at), t);
      tables.writeUInt32LE(bytes.length, t + 8);
      parts.push(bytes);
      at += bytes.length;
    }
    const foot = Buffer.from(c.subarray(c.length - 32));
    foot.writeBigUInt64LE(BigInt(at), 0);
    foot.writeBigUInt64LE(BigInt(at + 24 * f.frames), 8);
    foot.writeUInt32LE(version, 24);
    return Buffer.concat([...parts, tables, foot]);
  }

  for (const version of [1, 2] as const) {
    it(`the same journal written as format ${version} reads (whole, ranges from snapshots), verifies and restores byte for byte`, async () => {
      const LONG = finishedJournal(BODIES, "RunCompleted", 300);
      const src = tempExec(LONG);
      // Version 2: one block, so that its ranges start at row-major snapshots (lines 128, 256).
      await applyExtDiet(src, { force: true, workers: 0, blockTargetBytes: version === 2 ? 1 << 22 : 8192, packFrameTargetBytes: 2048 });
      if (version === 2) expect(JSON.parse(fs.readFileSync(layoutOf(src).manifest, "utf8")).ext.blocks).toBe(1);
      const exec = tempExec();
      const l = layoutOf(exec);
      const m = JSON.parse(fs.readFileSync(layoutOf(src).manifest, "utf8"));
      m.ext.version = version;
      fs.writeFileSync(l.manifest, JSON.stringify(m));
      fs.writeFileSync(l.dietedJournal, await downgrade(fs.readFileSync(layoutOf(src).dietedJournal), version));
      rmExec(src);
      expect(fs.readFileSync(l.dietedJournal).readUInt32LE(4)).toBe(version);
      const r = await openReader(exec);
      expect((await linesToBytes(r)).equals(LONG)).toBe(true);
      const lines = LONG.toString("utf8").split("\n");
      for (const n of [0, 150, 299]) {
        const got: string[] = [];
        for await (const raw of r.lines({ fromLine: n, toLine: n + 1 })) got.push(raw.bytes.toString("utf8"));
        expect(got).toEqual(lines.slice(n, n + 2));
      }
      await r.close();
      expect((await verifyDiet(exec)).originalBytes).toBe(LONG.length);
      expect((await restoreJournal(exec)).status).toBe("restored");
      expect(fs.readFileSync(l.journal).equals(LONG)).toBe(true);
      rmExec(exec);
    });
  }
});
