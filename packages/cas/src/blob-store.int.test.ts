import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { putBlob, readBlob, sweepCasTemps, listBlobs, syncBlobs } from "./blob-store.js";
import { sha256Hex } from "./sha.js";
import { ZstdPool } from "./zstd-pool.js";

const dirs: string[] = [];
function tmpExec(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "hw-cas-"));
  fs.mkdirSync(layoutOf(d).eventsDir, { recursive: true });
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return (e as { code?: string }).code ?? "no-code";
  }
}

describe("blob store", () => {
  it("deferred puts leave complete blobs and no temps; syncBlobs syncs them and refuses a missing one with a code", async () => {
    const exec = tmpExec();
    const bodies = Array.from({ length: 40 }, (_, i) => Buffer.from(`body ${i} `.repeat(600)));
    const shas = [];
    for (const b of bodies) shas.push((await putBlob(exec, b, undefined, { durability: "deferred" })).sha256);
    await syncBlobs(exec, shas);
    for (const [i, sha] of shas.entries()) expect((await readBlob(exec, sha)).equals(bodies[i])).toBe(true);
    expect(await sweepCasTemps(exec)).toBe(0);
    expect(await codeOf(syncBlobs(exec, [...shas, sha256Hex(Buffer.from("never stored"))]))).toBe("IO_ERROR");
  });

  it("deferred puts written by the pool's workers (compressToFile) are the in-thread blobs byte for byte; a directory at a blob path is NOT_A_REGULAR_FILE from the worker, no temp left", async () => {
    const inThread = tmpExec();
    const byPool = tmpExec();
    const bodies = Array.from({ length: 12 }, (_, i) => Buffer.from(`pool body ${i} `.repeat(500 + i * 40)));
    const pool = new ZstdPool(2);
    try {
      const writeVia = (d: Buffer, level: number, file: { path: string; tmp: string; shard: string }): Promise<number> => pool.compressToFile(d, level, file, { transfer: true });
      const results = await Promise.all(bodies.map((b) => putBlob(byPool, Buffer.from(b), undefined, { durability: "deferred", writeVia })));
      for (const [i, b] of bodies.entries()) {
        const r = await putBlob(inThread, b, undefined, { durability: "deferred" });
        expect(results[i]).toEqual(r);
        expect(fs.readFileSync(layoutOf(byPool).casBlob(r.sha256)).equals(fs.readFileSync(layoutOf(inThread).casBlob(r.sha256)))).toBe(true);
      }
      await syncBlobs(byPool, results.map((r) => r.sha256));
      expect(await sweepCasTemps(byPool)).toBe(0);
      const odd = Buffer.from("a directory sits at this one ".repeat(300));
      const oddPath = layoutOf(byPool).casBlob(sha256Hex(odd));
      fs.mkdirSync(oddPath, { recursive: true });
      fs.writeFileSync(path.join(oddPath, "x"), "keep");
      const l = layoutOf(byPool);
      expect(await codeOf(pool.compressToFile(odd, 9, { path: oddPath, tmp: l.casBlobTmp(sha256Hex(odd), "ab12"), shard: l.casShard(sha256Hex(odd)) }))).toBe("NOT_A_REGULAR_FILE");
      expect(fs.readFileSync(path.join(oddPath, "x"), "utf8")).toBe("keep");
      expect(await sweepCasTemps(byPool)).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("stores a body once under cas/<sha[0:2]>/<sha>.zst, readable by zstd -d", async () => {
    const exec = tmpExec();
    const body = Buffer.from("é body ".repeat(1000));
    const a = await putBlob(exec, body);
    expect(a.outcome).toBe("written");
    const file = layoutOf(exec).casBlob(a.sha256);
    expect(fs.existsSync(file)).toBe(true);
    expect(execFileSync("zstd", ["-d", "-c", "-q", file]).equals(body)).toBe(true);
    const b = await putBlob(exec, body);
    expect(b.outcome).toBe("reused");
    expect((await listBlobs(exec)).map((x) => x.sha256)).toEqual([a.sha256]);
    expect((await readBlob(exec, a.sha256, body.length)).equals(body)).toBe(true);
  });

  it("reads back a large varied body whose level-19 frame is split into many blocks", async () => {
    const exec = tmpExec();
    const words = ["alpha", "beta", "gamma", "δέλτα", "epsilon", "\n", "zeta", "eta", "θ", "iota"];
    let s = "";
    let x = 7;
    while (s.length < 300_000) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      s += words[x % words.length] + (x % 13 === 0 ? "\n" : " ") + (x % 1000);
    }
    const body = Buffer.from(s);
    const { sha256 } = await putBlob(exec, body);
    expect((await readBlob(exec, sha256, body.length)).equals(body)).toBe(true);
  });

  it("replaces a corrupt existing blob instead of trusting it", async () => {
    const exec = tmpExec();
    const body = Buffer.from("x".repeat(5000));
    const sha = sha256Hex(body);
    const file = layoutOf(exec).casBlob(sha);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, execFileSync("zstd", ["-q", "-c"], { input: Buffer.from("other") }));
    expect(await codeOf(readBlob(exec, sha))).toBe("CAS_CORRUPT");
    expect((await putBlob(exec, body)).outcome).toBe("replaced");
    expect((await readBlob(exec, sha)).equals(body)).toBe(true);
  });

  it("gives stable codes for missing, truncated, empty, non-regular and bad-ref blobs", async () => {
    const exec = tmpExec();
    const body = Buffer.from("y".repeat(9000));
    const { sha256 } = await putBlob(exec, body);
    const file = layoutOf(exec).casBlob(sha256);
    const good = fs.readFileSync(file);
    expect(await codeOf(readBlob(exec, "0".repeat(64)))).toBe("CAS_MISSING");
    expect(await codeOf(readBlob(exec, "../../etc/passwd"))).toBe("CAS_BAD_REF");
    expect(await codeOf(readBlob(exec, "A".repeat(64)))).toBe("CAS_BAD_REF");
    fs.writeFileSync(file, good.subarray(0, good.length - 3));
    expect(await codeOf(readBlob(exec, sha256))).toBe("CAS_CORRUPT");
    fs.writeFileSync(file, Buffer.alloc(0));
    expect(await codeOf(readBlob(exec, sha256))).toBe("CAS_CORRUPT");
    fs.rmSync(file);
    fs.mkdirSync(file);
    expect(await codeOf(readBlob(exec, sha256))).toBe("NOT_A_REGULAR_FILE");
  });

  it("sweeps stale temp files left by a crash", async () => {
    const exec = tmpExec();
    const { sha256 } = await putBlob(exec, Buffer.from("z".repeat(100)));
    const tmp = layoutOf(exec).casBlobTmp(sha256, "abc123");
    fs.writeFileSync(tmp, "partial");
    expect(await sweepCasTemps(exec)).toBe(1);
    expect(fs.existsSync(tmp)).toBe(false);
    expect(fs.existsSync(layoutOf(exec).casBlob(sha256))).toBe(true);
  });
});
