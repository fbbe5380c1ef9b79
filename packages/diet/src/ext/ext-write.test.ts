import { describe, expect, it } from "vitest";
import { prng } from "@hankweave-journal/journal/testing";
import { Pack } from "./ext-write.js";

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
