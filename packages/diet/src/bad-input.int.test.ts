import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { JOURNAL_ZSTD_LEVEL, SeekableWriter, compressOneShot, decompressZstd, sha256Hex } from "@hankweave-journal/cas";
import { applyDiet } from "./diet.js";
import { openReader } from "./open-reader.js";
import { restoreJournal } from "./restore.js";
import { ensureRestored } from "./ensure-restored.js";
import { verifyDiet } from "./verify-diet.js";
import { DietedSource } from "./dieted-source.js";
import { readManifest } from "./manifest.js";
import { codeOf, finishedJournal, linesToBytes, rmExec, snapshotDir, tempExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

const BODIES = ["α".repeat(3000), "b".repeat(9000), "c\n".repeat(4000)];

async function dieted(frameTargetBytes = 1500, seekable = false): Promise<{ exec: string; original: Buffer }> {
  const original = finishedJournal(BODIES);
  const exec = tempExec(original);
  made.push(exec);
  await applyDiet(exec, { frameTargetBytes, kind: seekable ? "seekable" : "compatible" });
  return { exec, original };
}

/** Every way of reading or restoring; each must fail with `code`, leaving the directory as it was. */
async function expectAllRefuse(exec: string, code: string | string[]): Promise<void> {
  const codes = Array.isArray(code) ? code : [code];
  const before = snapshotDir(exec);
  const readAll = async () => {
    const r = await openReader(exec);
    try {
      await linesToBytes(r);
    } finally {
      await r.close();
    }
  };
  expect(codes).toContain(await codeOf(readAll()));
  expect(codes).toContain(await codeOf(restoreJournal(exec)));
  expect(codes).toContain(await codeOf(restoreJournal(exec, { workers: 2 })));
  expect(codes).toContain(await codeOf(verifyDiet(exec)));
  expect(codes).toContain(await codeOf(verifyDiet(exec, { workers: 2 })));
  expect(codes).toContain(await codeOf(ensureRestored(exec)));
  expect(snapshotDir(exec)).toEqual(before);
  expect(fs.existsSync(layoutOf(exec).journal)).toBe(false);
}

/** Rewrite the pointer journal frame by frame (same lengths), keeping the seek table valid. */
async function rewriteFrames(exec: string, edit: (text: string) => string): Promise<void> {
  const l = layoutOf(exec);
  const m = await readManifest(l);
  if (m.framing === "one-frame") {
    // One frame (the default): decode it whole, edit, write it back as one frame.
    const text = (await decompressZstd(fs.readFileSync(l.dietedJournal), { maxBytes: 1 << 30 })).toString("utf8");
    fs.writeFileSync(l.dietedJournal, await compressOneShot(Buffer.from(edit(text)), JOURNAL_ZSTD_LEVEL));
    return;
  }
  const src = await DietedSource.open(l, m);
  const frames: Buffer[] = [];
  for (let k = 0; k < src.manifest.frames!.length; k++) frames.push(Buffer.from(edit((await src.framePointerBytes(k)).toString("utf8"))));
  await src.close();
  const fh = await fsp.open(l.dietedJournal, "w");
  const w = new SeekableWriter(fh, JOURNAL_ZSTD_LEVEL, 1);
  for (const f of frames) await w.addFrame(f);
  await w.finish();
  await fh.close();
}

function firstBlob(exec: string): string {
  const sha = sha256Hex(Buffer.from(BODIES[1]));
  return layoutOf(exec).casBlob(sha);
}

/** A zstd frame of 100 RLE blocks of 128 KiB: tiny on disk, 12.5 MiB decompressed, no content size. */
function expandingFrame(): Buffer {
  const blocks: number[] = [];
  for (let i = 0; i < 100; i++) {
    const bh = ((128 * 1024) << 3) | (1 << 1) | (i === 99 ? 1 : 0);
    blocks.push(bh & 0xff, (bh >> 8) & 0xff, (bh >> 16) & 0xff, 0x61);
  }
  return Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]), Buffer.from(blocks)]);
}

describe("bad input: a code, and nothing deleted", () => {
  it("a missing CAS blob → CAS_MISSING", async () => {
    const { exec } = await dieted();
    fs.rmSync(firstBlob(exec));
    await expectAllRefuse(exec, "CAS_MISSING");
  });

  it("a blob with wrong content → CAS_CORRUPT", async () => {
    const { exec } = await dieted();
    fs.writeFileSync(firstBlob(exec), execFileSync("zstd", ["-q", "-c"], { input: Buffer.from("d".repeat(9000)) }));
    await expectAllRefuse(exec, "CAS_CORRUPT");
  });

  it("a blob frame that expands far beyond its contentRef bytes → ZSTD_TOO_LARGE (refused before decompression)", async () => {
    const { exec } = await dieted();
    fs.writeFileSync(firstBlob(exec), expandingFrame());
    await expectAllRefuse(exec, "ZSTD_TOO_LARGE");
  });

  it("a blob whose frame header claims a huge content size → ZSTD_TOO_LARGE", async () => {
    const { exec } = await dieted();
    const huge = Buffer.alloc(4 + 1 + 8 + 3);
    huge.writeUInt32LE(0xfd2fb528, 0);
    huge[4] = 0xe0; // 8-byte Frame_Content_Size, single segment
    huge.writeBigUInt64LE(2n ** 40n, 5);
    huge[13] = 0x01;
    fs.writeFileSync(firstBlob(exec), huge);
    await expectAllRefuse(exec, "ZSTD_TOO_LARGE");
  });

  it("a contentRef sha256 that is a path, or not hex → CAS_BAD_REF", async () => {
    for (const fake of ["../../etc/passwd".padStart(64, "/"), "Z".repeat(64)]) {
      const { exec } = await dieted();
      const sha = sha256Hex(Buffer.from(BODIES[1]));
      await rewriteFrames(exec, (t) => t.replace(sha, fake));
      await expectAllRefuse(exec, "CAS_BAD_REF");
    }
  });

  it("a truncated .zst and a 0-byte .zst → ZSTD_CORRUPT", async () => {
    const a = await dieted();
    const zst = layoutOf(a.exec).dietedJournal;
    fs.truncateSync(zst, fs.statSync(zst).size - 7);
    await expectAllRefuse(a.exec, "ZSTD_CORRUPT");
    const b = await dieted();
    fs.writeFileSync(layoutOf(b.exec).dietedJournal, Buffer.alloc(0));
    await expectAllRefuse(b.exec, "ZSTD_CORRUPT");
  });

  it("a frame that expands beyond its seek-table size (--seekable) → ZSTD_TOO_LARGE", async () => {
    const { exec } = await dieted(1 << 20, true);
    const l = layoutOf(exec);
    const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    const frame = expandingFrame();
    const table = Buffer.alloc(8 + 8 + 9);
    table.writeUInt32LE(0x184d2a5e, 0);
    table.writeUInt32LE(17, 4);
    table.writeUInt32LE(frame.length, 8);
    table.writeUInt32LE(m.frames[0].originalBytes, 12);
    table.writeUInt32LE(1, 16);
    table.writeUInt32LE(0x8f92eab1, 21);
    expect(m.frames.length).toBe(1);
    fs.writeFileSync(l.dietedJournal, Buffer.concat([frame, table]));
    await expectAllRefuse(exec, "ZSTD_TOO_LARGE");
  });

  it("a manifest that lies about the hash → MANIFEST_MISMATCH; about the size → MANIFEST_INVALID", async () => {
    const a = await dieted();
    const la = layoutOf(a.exec);
    const m = JSON.parse(fs.readFileSync(la.manifest, "utf8"));
    fs.writeFileSync(la.manifest, JSON.stringify({ ...m, originalSha256: "0".repeat(64) }));
    const before = snapshotDir(a.exec);
    expect(await codeOf(restoreJournal(a.exec))).toBe("MANIFEST_MISMATCH");
    expect(await codeOf(verifyDiet(a.exec))).toBe("MANIFEST_MISMATCH");
    expect(await codeOf(verifyDiet(a.exec, { workers: 2 }))).toBe("MANIFEST_MISMATCH");
    expect(await codeOf(ensureRestored(a.exec))).toBe("MANIFEST_MISMATCH");
    expect(snapshotDir(a.exec)).toEqual(before);
    expect(fs.existsSync(la.journal)).toBe(false);
    const b = await dieted();
    const lb = layoutOf(b.exec);
    fs.writeFileSync(lb.manifest, JSON.stringify({ ...m, originalBytes: m.originalBytes + 10 }));
    await expectAllRefuse(b.exec, "MANIFEST_INVALID");
    fs.writeFileSync(lb.manifest, "{not json");
    await expectAllRefuse(b.exec, "MANIFEST_INVALID");
  });

  it("a frame index whose rewritten lines are inconsistent → MANIFEST_INVALID when that frame is used, and for restore", async () => {
    const { exec, original } = await dieted();
    const l = layoutOf(exec);
    const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    const k = m.frames.findIndex((f: { rewritten: number[] }) => f.rewritten.length > 0);
    expect(k).toBeGreaterThanOrEqual(0);
    const f = m.frames[k];
    // Flat [index, bytes, …]: the same rewritten line listed twice (not strictly increasing).
    f.rewritten = [f.rewritten[0], f.rewritten[1], ...f.rewritten];
    fs.writeFileSync(l.manifest, JSON.stringify(m));
    // The open and other frames still read (a one-line read checks only its own frame)…
    const other = m.frames.findIndex((_: unknown, j: number) => j !== k);
    const r = await openReader(exec);
    try {
      const raw = [];
      for await (const x of r.lines({ fromLine: m.frames[other].firstLine, toLine: m.frames[other].firstLine })) raw.push(x);
      expect(raw[0].bytes.equals(original.subarray(raw[0].offset, raw[0].offset + raw[0].bytes.length))).toBe(true);
      expect(await codeOf(r.getLine(f.firstLine + f.rewritten[0]))).toBe("MANIFEST_INVALID");
    } finally {
      await r.close();
    }
    // …and every whole read, restore and verify refuses, touching nothing.
    await expectAllRefuse(exec, "MANIFEST_INVALID");
  });

  it("half a pair → HALF_PAIR (both halves)", async () => {
    const a = await dieted();
    fs.rmSync(layoutOf(a.exec).manifest);
    await expectAllRefuse(a.exec, ["HALF_PAIR", "MANIFEST_INVALID"]);
    expect(await codeOf(openReader(a.exec))).toBe("HALF_PAIR");
    expect(await codeOf(restoreJournal(a.exec))).toBe("HALF_PAIR");
    expect(await codeOf(applyDiet(a.exec))).toBe("HALF_PAIR");
    const b = await dieted();
    fs.rmSync(layoutOf(b.exec).dietedJournal);
    expect(await codeOf(openReader(b.exec))).toBe("HALF_PAIR");
    expect(await codeOf(ensureRestored(b.exec))).toBe("HALF_PAIR");
  });

  it("an events.jsonl that differs from its manifest → RESTORE_CONFLICT, the journal untouched", async () => {
    const { exec, original } = await dieted();
    const l = layoutOf(exec);
    const other = Buffer.concat([original, Buffer.from('{"id":"x","timestamp":"t","type":"info","data":{}}\n')]);
    fs.writeFileSync(l.journal, other);
    const before = snapshotDir(exec);
    expect(await codeOf(restoreJournal(exec))).toBe("RESTORE_CONFLICT");
    expect(await codeOf(ensureRestored(exec))).toBe("RESTORE_CONFLICT");
    expect(snapshotDir(exec)).toEqual(before);
    expect(fs.readFileSync(l.journal).equals(other)).toBe(true);
  });

  it("a live lock → LOCK_HELD for diet and ensureRestored", async () => {
    const original = finishedJournal(BODIES);
    const exec = tempExec(original);
    made.push(exec);
    const l = layoutOf(exec);
    const now = new Date().toISOString();
    const lock = JSON.stringify({ pid: process.pid, lockId: "11111111-2222-3333-4444-555555555555", runId: null, startTime: now, lastHeartbeat: now });
    fs.writeFileSync(l.lock, lock);
    const before = snapshotDir(exec);
    expect(await codeOf(applyDiet(exec))).toBe("LOCK_HELD");
    expect(await codeOf(applyDiet(exec, { force: true }))).toBe("LOCK_HELD");
    expect(snapshotDir(exec)).toEqual(before);
    fs.rmSync(l.lock);
    await applyDiet(exec);
    fs.writeFileSync(l.lock, lock);
    const before2 = snapshotDir(exec);
    expect(await codeOf(ensureRestored(exec))).toBe("LOCK_HELD");
    expect(snapshotDir(exec)).toEqual(before2);
    expect((await ensureRestored(exec, { ownLockId: "11111111-2222-3333-4444-555555555555" })).status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
  });

  it("a stale lock (dead pid) is claimed; the lock is released afterwards", async () => {
    const exec = tempExec(finishedJournal(BODIES));
    made.push(exec);
    const l = layoutOf(exec);
    const old = new Date(Date.now() - 10 * 60_000).toISOString();
    fs.writeFileSync(l.lock, JSON.stringify({ pid: 2 ** 22 + 12345, lockId: "dead", runId: null, startTime: old, lastHeartbeat: old }));
    expect((await applyDiet(exec)).status).toBe("dieted");
    expect(fs.existsSync(l.lock)).toBe(false);
  });

  it("non-regular journal files → NOT_A_REGULAR_FILE", async () => {
    const { exec } = await dieted();
    const l = layoutOf(exec);
    fs.mkdirSync(l.journal);
    expect(await codeOf(ensureRestored(exec))).toBe("NOT_A_REGULAR_FILE");
    fs.rmdirSync(l.journal);
    execFileSync("mkfifo", [l.journal]);
    expect(await codeOf(ensureRestored(exec))).toBe("NOT_A_REGULAR_FILE");
  });
});

describe("the compatible diet's verification in step with its writing", () => {
  it("a blob damaged on disk after it was written → DIET_VERIFY_FAILED (cause CAS_CORRUPT), the journal kept, no pair", async () => {
    const original = finishedJournal(BODIES);
    const exec = tempExec(original);
    made.push(exec);
    const l = layoutOf(exec);
    let damaged = 0;
    const err = await applyDiet(exec, {
      frameTargetBytes: 1500,
      hook: (step) => {
        if (step !== "blob" || damaged > 0) return;
        // A blob already in place (others may still be temps): same size, other bytes.
        const shards = fs.readdirSync(l.casDir).filter((d) => /^[0-9a-f]{2}$/.test(d));
        const file = shards.flatMap((d) => fs.readdirSync(`${l.casDir}/${d}`).filter((n) => /^[0-9a-f]{64}\.zst$/.test(n)).map((n) => `${l.casDir}/${d}/${n}`))[0];
        const b = fs.readFileSync(file);
        b.fill(0x41, Math.min(12, b.length - 1));
        fs.writeFileSync(file, b);
        damaged++;
      },
    }).catch((e: unknown) => e as { code?: string; cause?: { code?: string } });
    expect({ damaged, err: String(err) }).toMatchObject({ damaged: 1 });
    expect(err).toMatchObject({ code: "DIET_VERIFY_FAILED", cause: { code: expect.stringMatching(/^(CAS_CORRUPT|ZSTD_TOO_LARGE)$/) } });
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
    expect(fs.existsSync(l.dietedJournal) || fs.existsSync(l.manifest)).toBe(false);
    expect(fs.existsSync(l.dietedJournalTmp) || fs.existsSync(l.manifestTmp)).toBe(false);
  });
});

describe("preconditions and idempotence", () => {
  it("refuses RUN_NOT_FINISHED when the last run is running or absent; --force overrides", async () => {
    for (const end of [null] as const) {
      const exec = tempExec(finishedJournal(BODIES, end));
      made.push(exec);
      const before = snapshotDir(exec);
      expect(await codeOf(applyDiet(exec))).toBe("RUN_NOT_FINISHED");
      expect(snapshotDir(exec)).toEqual(before);
      expect((await applyDiet(exec, { force: true })).status).toBe("dieted");
    }
    const failed = tempExec(finishedJournal(BODIES, "RunFailed"));
    made.push(failed);
    expect((await applyDiet(failed)).status).toBe("dieted");
  });

  it("an already dieted directory is re-verified and reported as such", async () => {
    const { exec } = await dieted();
    const before = snapshotDir(exec);
    const r = await applyDiet(exec);
    expect(r.status).toBe("already-dieted");
    expect(r.verified).toBe(true);
    expect(snapshotDir(exec)).toEqual(before);
  });

  it("ensureRestored restores in place, prunes the pair and keeps the CAS", async () => {
    const { exec, original } = await dieted();
    const l = layoutOf(exec);
    const r = await ensureRestored(exec);
    expect(r.status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
    expect(fs.existsSync(l.dietedJournal) || fs.existsSync(l.manifest)).toBe(false);
    expect(fs.readdirSync(l.casDir).length).toBeGreaterThan(0);
    expect((await ensureRestored(exec)).status).toBe("plain");
  });
});
