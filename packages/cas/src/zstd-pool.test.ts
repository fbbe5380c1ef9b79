import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ZstdPool } from "./zstd-pool.js";
import { compressOneShot } from "./zstd-native.js";
import { decompressZstd } from "./zstd.js";
import { inspectZstd } from "./zstd-frames.js";

function bodies(): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 12; i++) {
    const text = `export const value${i} = ${JSON.stringify("é—x".repeat(50 + i * 97))};\n`.repeat(20 + i * 7);
    out.push(Buffer.from(text));
  }
  out.push(randomBytes(9000)); // incompressible
  // A view into a larger buffer: only its own bytes may be compressed.
  const big = Buffer.from("AAAA".repeat(3000) + "the body itself ".repeat(400) + "ZZZZ".repeat(3000));
  out.push(big.subarray(12000, 12000 + 16 * 400));
  return out;
}

describe("ZstdPool", () => {
  it("returns frames byte-identical to the in-thread compressor, in any completion order", async () => {
    const pool = new ZstdPool(2);
    try {
      const input = bodies();
      const fromPool = await Promise.all(input.map((b) => pool.compress(b, 19)));
      for (let i = 0; i < input.length; i++) {
        const local = await compressOneShot(input[i], 19);
        expect(fromPool[i].equals(local)).toBe(true);
        expect(inspectZstd(fromPool[i])[0].contentSize).toBe(input[i].length);
        const back = await decompressZstd(fromPool[i], { maxBytes: 1 << 24, expectedBytes: input[i].length });
        expect(back.equals(input[i])).toBe(true);
      }
      expect(pool.pending).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it("rejects work after close and leaves the caller's buffer untouched", async () => {
    const pool = new ZstdPool(1);
    const body = Buffer.from("keep me ".repeat(1000));
    const copy = Buffer.from(body);
    await pool.compress(body, 3);
    expect(body.equals(copy)).toBe(true);
    await pool.close();
    await expect(pool.compress(body, 3)).rejects.toThrow(/closed/);
  });

  it("transfer: a whole buffer moves to the worker (detached here), a view is copied and kept; the frames are the same", async () => {
    const pool = new ZstdPool(1);
    try {
      const text = "moved, not copied ".repeat(800);
      const whole = Buffer.from(text);
      const expected = await compressOneShot(Buffer.from(text), 9);
      const frame = await pool.compress(whole, 9, { transfer: true });
      expect(whole.byteLength).toBe(0);
      expect(frame.equals(expected)).toBe(true);
      const big = Buffer.from(`xxxx${text}yyyy`);
      const view = big.subarray(4, 4 + text.length);
      expect((await pool.compress(view, 9, { transfer: true })).equals(expected)).toBe(true);
      expect(view.toString()).toBe(text);
    } finally {
      await pool.close();
    }
  });
});
