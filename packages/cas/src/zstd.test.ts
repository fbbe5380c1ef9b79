import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compressOneShot, decodeInto } from "./zstd-native.js";
import { compressZstd, decompressZstd } from "./zstd.js";
import { inspectZstd } from "./zstd-frames.js";
import { encodeSeekTable, parseSeekTable } from "./seekable.js";

const text = Buffer.from("line of a journal\n".repeat(5000));

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return (e as { code?: string }).code ?? "no-code";
  }
}

describe("zstd guard", () => {
  it("round-trips a frame written at level 19 and reads concatenated frames as one stream", async () => {
    const a = await compressZstd(text, 19);
    const b = await compressZstd(Buffer.from("tail\n"), 3);
    const out = await decompressZstd(Buffer.concat([a, b]), { maxBytes: 1 << 20 });
    expect(out.equals(Buffer.concat([text, Buffer.from("tail\n")]))).toBe(true);
    expect(inspectZstd(Buffer.concat([a, b])).length).toBe(2);
  });

  it("skips a skippable frame (the seek table) when decompressing", async () => {
    const a = await compressZstd(text, 3);
    const table = encodeSeekTable([{ compressedSize: a.length, decompressedSize: text.length }]);
    const out = await decompressZstd(Buffer.concat([a, table]), { maxBytes: 1 << 20 });
    expect(out.equals(text)).toBe(true);
  });

  it("refuses 0 bytes, truncation and garbage with ZSTD_CORRUPT", async () => {
    const a = await compressZstd(text, 3);
    expect(await codeOf(decompressZstd(Buffer.alloc(0), { maxBytes: 10 }))).toBe("ZSTD_CORRUPT");
    expect(await codeOf(decompressZstd(a.subarray(0, a.length - 2), { maxBytes: 1 << 20 }))).toBe("ZSTD_CORRUPT");
    expect(await codeOf(decompressZstd(Buffer.from("not zstd at all"), { maxBytes: 1 << 20 }))).toBe("ZSTD_CORRUPT");
  });

  it("refuses a frame header claiming a huge content size before decompressing", async () => {
    // Single-segment frame, 8-byte Frame_Content_Size = 2^40, one empty raw last block.
    const huge = Buffer.alloc(4 + 1 + 8 + 3);
    huge.writeUInt32LE(0xfd2fb528, 0);
    huge[4] = 0xe0; // FCS flag 3 (8 bytes) + single segment
    huge.writeBigUInt64LE(2n ** 40n, 5);
    huge[13] = 0x01; // last block, raw, size 0
    expect(await codeOf(decompressZstd(huge, { maxBytes: 1 << 20 }))).toBe("ZSTD_TOO_LARGE");
    // Under the limit it still claims more than its blocks can hold: structurally corrupt.
    expect(await codeOf(decompressZstd(huge, { maxBytes: 2 ** 41 }))).toBe("ZSTD_CORRUPT");
    // A frame of RLE blocks really expanding beyond the bound: too large.
    const blocks: number[] = [];
    for (let i = 0; i < 100; i++) {
      const bh = ((128 * 1024) << 3) | (1 << 1) | (i === 99 ? 1 : 0);
      blocks.push(bh & 0xff, (bh >> 8) & 0xff, (bh >> 16) & 0xff, 0x61);
    }
    const rle = Buffer.concat([Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]), Buffer.from(blocks)]);
    expect(await codeOf(decompressZstd(rle, { maxBytes: 1 << 20 }))).toBe("ZSTD_TOO_LARGE");
    expect((await decompressZstd(rle, { maxBytes: 100 << 20 })).length).toBe(100 * 128 * 1024);
  });

  it("reads frames written by the zstd CLI, with and without content size", async () => {
    for (const flags of [["-q", "-c"], ["-q", "-c", "--no-content-size"], ["-q", "-c", "--check"]]) {
      const frame = execFileSync("zstd", flags, { input: text });
      expect((await decompressZstd(frame, { maxBytes: 1 << 20, expectedBytes: text.length })).equals(text)).toBe(true);
    }
  });
});

describe("synchronous decoding into the expected size (libzstd through zstd-napi)", () => {
  const bodyArb = fc.oneof(
    fc.uint8Array({ minLength: 0, maxLength: 70_000 }).map((a) => Buffer.from(a)),
    fc.tuple(fc.string({ unit: "grapheme", maxLength: 60 }), fc.integer({ min: 1, max: 3000 })).map(([t, n]) => Buffer.from(t.repeat(n))),
  );

  it("gives the streaming decoder's bytes, for frames with and without a content size, and refuses any other expected size", async () => {
    await fc.assert(fc.asyncProperty(bodyArb, fc.constantFrom(1, 3, 19), async (body, level) => {
      const lvl = level > 3 && body.length > 20_000 ? 3 : level;
      const sized = await compressOneShot(body, lvl); // content size in the header
      const unsized = await compressZstd(body, 3); // level 3 is @mongodb-js/zstd's compress: no content size
      expect(inspectZstd(sized)[0].contentSize).toBe(body.length);
      if (body.length > 0) expect(inspectZstd(unsized)[0].contentSize).toBeNull(); // (an empty stream declares 0)
      const limit = decompressLimit(body.length);
      // No expected size and none declared: the streaming decoder.
      const streamed = await decompressZstd(unsized, { maxBytes: limit });
      expect(streamed.equals(body)).toBe(true);
      for (const frame of [sized, unsized]) {
        expect((await decompressZstd(frame, { maxBytes: limit, expectedBytes: body.length })).equals(body)).toBe(true);
        if (body.length > 0) expect(await codeOf(decompressZstd(frame, { maxBytes: limit, expectedBytes: body.length - 1 }))).toBe("ZSTD_CORRUPT");
        expect(await codeOf(decompressZstd(frame, { maxBytes: limit, expectedBytes: body.length + 1 }))).toBe("ZSTD_CORRUPT");
      }
    }), { numRuns: 40 });
  });

  it("outputs above the synchronous limit (8 MiB) take the threadpool decoder, with the same checks", async () => {
    const big = Buffer.from("a line of a large body, 0123456789\n".repeat(300_000)); // ~10.5 MB
    for (const frame of [await compressOneShot(big, 1), await compressZstd(big, 3)]) {
      const limit = decompressLimit(big.length);
      expect((await decompressZstd(frame, { maxBytes: limit, expectedBytes: big.length })).equals(big)).toBe(true);
      expect(await codeOf(decompressZstd(frame, { maxBytes: limit, expectedBytes: big.length - 1 }))).toBe("ZSTD_CORRUPT");
      expect(await codeOf(decompressZstd(frame, { maxBytes: limit, expectedBytes: big.length + 1 }))).toBe("ZSTD_CORRUPT");
    }
  });

  it("decodeInto never writes past the buffer it is given", async () => {
    const body = Buffer.from("0123456789abcdef".repeat(4096));
    const frame = await compressZstd(body, 3);
    const guard = Buffer.alloc(body.length + 64, 0xee);
    expect(() => decodeInto(guard.subarray(0, body.length - 1), frame)).toThrow();
    expect(guard.subarray(body.length - 1).every((b) => b === 0xee)).toBe(true);
    expect(decodeInto(guard.subarray(0, body.length), frame)).toBe(body.length);
    expect(guard.subarray(0, body.length).equals(body)).toBe(true);
    expect(guard.subarray(body.length).every((b) => b === 0xee)).toBe(true);
  });

  it("refuses damaged frames with a code (never a crash): ZSTD_CORRUPT / ZSTD_TOO_LARGE, or bytes the caller's SHA-256 check rejects", async () => {
    const body = Buffer.from("a body of a CAS blob, repeated\n".repeat(400));
    const frame = await compressOneShot(body, 19);
    await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: frame.length - 1 }), fc.integer({ min: 1, max: 255 }), async (at, x) => {
      const bad = Buffer.from(frame);
      bad[at] ^= x;
      const code = await codeOf(decompressZstd(bad, { maxBytes: decompressLimit(body.length), expectedBytes: body.length }));
      expect(["ok", "ZSTD_CORRUPT", "ZSTD_TOO_LARGE"]).toContain(code);
    }), { numRuns: 200 });
    expect(await codeOf(decompressZstd(frame.subarray(0, frame.length - 1), { maxBytes: 1 << 20 }))).toBe("ZSTD_CORRUPT");
  });
});

function decompressLimit(n: number): number {
  return n * 16 + (1 << 20);
}

describe("seek table", () => {
  it("parses what it encodes only when the sizes add up to the file", () => {
    const entries = [{ compressedSize: 100, decompressedSize: 400 }, { compressedSize: 50, decompressedSize: 60 }];
    const table = encodeSeekTable(entries);
    const file = Buffer.concat([Buffer.alloc(150), table]);
    const parsed = parseSeekTable(file, file.length);
    expect(parsed?.entries).toEqual(entries);
    expect(parsed?.offsets).toEqual([0, 100]);
    expect(parseSeekTable(Buffer.concat([Buffer.alloc(151), table]), 151 + table.length)).toBeNull();
    const badFooter = Buffer.from(file);
    badFooter.writeUInt32LE(0x12345678, badFooter.length - 4);
    expect(parseSeekTable(badFooter, badFooter.length)).toBeNull();
  });
});
