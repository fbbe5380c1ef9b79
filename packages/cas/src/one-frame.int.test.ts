import * as fs from "node:fs";
import * as fsp from "node:fs/promises";
import * as os from "node:os";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { OneFrameFollower, OneFrameWriter } from "./one-frame.js";
import { decompressZstd } from "./zstd.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** 3 MiB that do not compress (three 1 MiB writes and more) behind a text prefix that does. */
function input(): Buffer {
  return Buffer.concat([Buffer.from("x".repeat(100_000)), randomBytes(3 * 1024 * 1024)]);
}

/**
 * Write `data` as one frame in pieces with a follower decoding each write back from the file;
 * `tamper(position, length, file)` runs after a write and before the follower reads it.
 */
async function writeFollowed(data: Buffer, tamper?: (position: number, length: number, file: string) => void): Promise<{ file: string; decoded: Buffer; follower: OneFrameFollower; bytes: number; rfd: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hw-one-frame-"));
  dirs.push(dir);
  const file = path.join(dir, "j.zst");
  const fh = await fsp.open(file, "wx");
  const rfd = fs.openSync(file, "r");
  const follower = new OneFrameFollower(rfd, file);
  const decoded = Buffer.alloc(data.length);
  let fill = 0;
  const w = new OneFrameWriter(fh, 3, 0);
  w.onWritten = (position, length) => {
    tamper?.(position, length, file);
    follower.written(position, length, w.pendingHeader);
    fill = follower.decodeInto(decoded, fill);
  };
  for (let at = 0; at < data.length; at += 700_000) await w.write(data.subarray(at, at + 700_000));
  const { bytes } = await w.finish();
  await fh.close();
  fill = follower.decodeInto(decoded, fill);
  expect(fill).toBe(data.length);
  return { file, decoded, follower, bytes, rfd };
}

describe("OneFrameFollower: the one-frame journal decoded from disk while it is written", () => {
  it("gives back every byte in step with the writes, and accepts the finished frame and its header", async () => {
    const data = input();
    const r = await writeFollowed(data);
    try {
      expect(r.decoded.equals(data)).toBe(true);
      expect(() => r.follower.checkEnd(r.bytes)).not.toThrow();
      // The file itself is the frame (with its content size) that the one-shot decoder reads.
      expect((await decompressZstd(fs.readFileSync(r.file), { maxBytes: 1 << 24, expectedBytes: data.length })).equals(data)).toBe(true);
    } finally {
      fs.closeSync(r.rfd);
    }
  });

  it("reads the file, not the writer's memory: a byte changed on disk behind the writer comes back changed", async () => {
    const data = input();
    let flipped = -1;
    const r = await writeFollowed(data, (position, length, file) => {
      if (flipped >= 0 || length < 200_000) return;
      // Inside the stored (incompressible) part: the decoder copies it out as it is.
      flipped = position + length - 1000;
      const fd = fs.openSync(file, "r+");
      const b = Buffer.alloc(1);
      fs.readSync(fd, b, 0, 1, flipped);
      b[0] ^= 0xff;
      fs.writeSync(fd, b, 0, 1, flipped);
      fs.closeSync(fd);
    });
    try {
      expect(flipped).toBeGreaterThan(0);
      expect(r.decoded.equals(data)).toBe(false);
    } finally {
      fs.closeSync(r.rfd);
    }
  });

  it("refuses a header on disk that is not the decoded one with its content size, and a file of another size: ZSTD_CORRUPT", async () => {
    const data = input();
    const r = await writeFollowed(data);
    try {
      expect(() => r.follower.checkEnd(r.bytes + 1)).toThrow(expect.objectContaining({ code: "ZSTD_CORRUPT" }));
      const fd = fs.openSync(r.file, "r+");
      // The last byte of the 8-byte Frame_Content_Size (the header is 6 bytes before it here).
      const at = 6 + 7;
      fs.writeSync(fd, Buffer.from([1]), 0, 1, at);
      fs.closeSync(fd);
      expect(() => r.follower.checkEnd(r.bytes)).toThrow(expect.objectContaining({ code: "ZSTD_CORRUPT" }));
    } finally {
      fs.closeSync(r.rfd);
    }
  });
});
