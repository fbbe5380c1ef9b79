import { describe, expect, it } from "vitest";
import { prng } from "@hankweave-journal/journal/testing";
import { Pack } from "./ext-write.js";
import { longPieces } from "./block-codec.js";
import { PIECE_MIN_CHARS } from "./format.js";

/** The pack's id assignment as it was written with string keys (before pieces came as bytes with hashes). */
function referenceIds(pieces: string[], window: number, frameTarget: number): { ids: number[]; frames: string[] } {
  const ids = new Map<string, { id: number; at: number }>();
  const inWindow: { piece: string; id: number; at: number }[] = [];
  let head = 0;
  let pending: string[] = [];
  let pendingBytes = 0;
  let nextId = 0;
  let poolBytes = 0;
  const out: number[] = [];
  const frames: string[] = [];
  for (const piece of pieces) {
    const known = ids.get(piece);
    if (known !== undefined && poolBytes - known.at <= window) {
      out.push(known.id);
      continue;
    }
    const e = { id: nextId++, at: poolBytes };
    ids.set(piece, e);
    inWindow.push({ piece, ...e });
    const bytes = Buffer.byteLength(piece) + 1;
    poolBytes += bytes;
    pending.push(piece);
    pendingBytes += bytes;
    if (pendingBytes >= frameTarget) {
      frames.push(`${pending.join("\n")}\n`);
      pending = [];
      pendingBytes = 0;
    }
    while (head < inWindow.length && poolBytes - inWindow[head].at > window) {
      const old = inWindow[head++];
      if (ids.get(old.piece)?.id === old.id) ids.delete(old.piece);
    }
    out.push(e.id);
  }
  if (pending.length > 0) frames.push(`${pending.join("\n")}\n`);
  return { ids: out, frames };
}

describe("the pack's dedupe by bytes and hash", () => {
  it("assigns the ids and fills the frames the string-keyed pack did, even when every hash collides", () => {
    const rnd = prng(5);
    const vocab = Array.from({ length: 400 }, (_, k) => `piece ${k} ${"é—".repeat(k % 4)}${"x".repeat(k % 50)}`);
    const pieces = Array.from({ length: 6000 }, () => vocab[Math.floor(rnd() * rnd() * vocab.length)]);
    for (const [window, frameTarget] of [[3000, 700], [1 << 20, 4096], [200, 64]]) {
      const want = referenceIds(pieces, window, frameTarget);
      for (const hashOf of [(k: number) => k % 7, () => 0]) {
        const pack = new Pack(window, frameTarget);
        const got: number[] = [];
        const frames: string[] = [];
        // Pieces arrive in blocks of 500, each block one buffer (as from a column worker).
        for (let b = 0; b < pieces.length; b += 500) {
          const block = pieces.slice(b, b + 500);
          const buf = Buffer.from(`${block.join("\n")}\n`);
          let start = 0;
          block.forEach((p) => {
            const end = start + Buffer.byteLength(p);
            got.push(pack.idOf(hashOf(vocab.indexOf(p)), buf, start, end));
            start = end + 1;
          });
          for (const f of pack.full.splice(0)) frames.push(f.raw.toString("utf8"));
        }
        if (pack.pending.length > 0) frames.push(pack.take().raw.toString("utf8"));
        expect(got).toEqual(want.ids);
        expect(frames).toEqual(want.frames);
      }
    }
  });
});

describe("a block's long pieces, found in its texts' bytes", () => {
  it("are the pieces split(\"\\\\n\") gives of PIECE_MIN_CHARS or more UTF-16 units, in order, with equal bytes hashing equal", () => {
    const rnd = prng(9);
    // Escaped content as the encoder holds it: `\\n` escapes, escaped backslashes before an n,
    // multi-byte characters (2, 3 and 4 bytes: a 15-unit piece can be 16 bytes or more).
    const parts = ["\\n", "\\\\n", "\\\\", "n", "é", "—", "😀", "abc", "x".repeat(13), "y".repeat(16), "z".repeat(40), "\\u0001", "\\\""];
    const texts = Array.from({ length: 400 }, () => {
      let t = "";
      while (t.length < 32 || rnd() < 0.8) t += parts[Math.floor(rnd() * parts.length)];
      return t;
    });
    const want = texts.flatMap((t) => t.split("\\n")).filter((p) => p.length >= PIECE_MIN_CHARS);
    const got = longPieces(texts, 77);
    expect(got.ends.length).toBe(want.length);
    const seen = new Map<string, number>();
    for (let k = 0; k < want.length; k++) {
      expect(got.bytes.toString("utf8", got.starts[k], got.ends[k])).toBe(want[k]);
      const h = seen.get(want[k]);
      if (h !== undefined) expect(got.hashes[k]).toBe(h);
      seen.set(want[k], got.hashes[k]);
    }
    // Pieces of exactly 15 units in more than 15 bytes stay inline; of 16 units, long.
    const edge = longPieces([`${"é".repeat(15)}\\n${"é".repeat(16)}\\n${"😀".repeat(8)}`], 1);
    expect([...edge.ends].map((e, k) => edge.bytes.toString("utf8", edge.starts[k], e))).toEqual(["é".repeat(16), "😀".repeat(8)]);
  });
});
