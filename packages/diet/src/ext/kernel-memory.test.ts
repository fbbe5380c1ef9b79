import { describe, expect, it } from "vitest";
import { FORMAT_VERSION, STREAM_LEVEL } from "./format.js";
import { Scratch, decodeBlockRange, encodeColumns, kernelBlockCount, sealBlock, setKernelOutChunk, unpackRecord, wholeDecodeBytes } from "./block-codec.js";
import { textStreams } from "./test-helpers.js";
import { threadRebuilder } from "./rebuild-wasm.js";

// The rebuild kernel's memory grows while a block is being decoded (its job region, a frame): the
// views of it taken before then are detached. Its own file: the thread's rebuilder starts empty,
// so where each allocation lands (and when the memory grows) is known.

const LINES = 4000;
const t0 = Date.UTC(2026, 2, 1);
const text = Array.from({ length: LINES }, (_, i) => (i % 3 === 0
  ? JSON.stringify({ id: `${t0 + i * 13}-q${i.toString(36)}`, timestamp: new Date(t0 + i * 13).toISOString(), type: "a", x: `x${i}`, n: i })
  : JSON.stringify({ type: "b", n: i * 7, tag: `t${i % 17}`, ok: i % 2 === 0 }))).join("\n") + "\n";
const raw = Buffer.from(text);
const c = encodeColumns(raw, STREAM_LEVEL);
const record = sealBlock(c, textStreams(c.texts, { idOf: () => { throw new Error("no pieces here"); } }, c.snapTexts), STREAM_LEVEL);
const shape = { lines: LINES, originalBytes: raw.length, lastUnterminated: false, version: FORMAT_VERSION };
const noPieces = () => {
  throw new Error("no pieces here");
};
const w = threadRebuilder();

describe("extended diet block decoder: the kernel's memory growing under a block", () => {
  it.runIf(w !== null)("a job region that grows the memory after the streams were placed in it: the kernel still rebuilds the block (no JavaScript fallback)", () => {
    const rb = w as NonNullable<typeof w>;
    const scratch = new Scratch(rb);
    /** The record read into the scratch, as ExtSource reads it, and decoded whole. */
    const decode = (): { data: Buffer; inMemory: boolean } => {
      scratch.reset();
      const r = scratch.take(record.length);
      record.copy(r);
      const inMemory = r.buffer === rb.buf.buffer;
      return { data: Buffer.from(decodeBlockRange(r, shape, noPieces, undefined, 0, LINES - 1, { scratch }).data), inMemory };
    };
    const was = setKernelOutChunk(64);
    try {
      // A small job region; the second decode finds the scratch region sized by the first: the streams are in the kernel's memory.
      const before = kernelBlockCount();
      expect(decode().data.equals(raw)).toBe(true);
      const second = decode();
      expect(second.data.equals(raw)).toBe(true);
      expect(second.inMemory).toBe(true);
      expect(kernelBlockCount() - before).toBe(2);
      // A larger output region: the job region is allocated again, past the memory's end.
      setKernelOutChunk(1 << 20);
      const mem = rb.buf.buffer;
      const third = decode();
      expect(third.inMemory).toBe(true);
      expect(rb.buf.buffer).not.toBe(mem);
      expect(third.data.equals(raw)).toBe(true);
      expect(kernelBlockCount() - before).toBe(3);
    } finally {
      setKernelOutChunk(was);
    }
  });

  it.runIf(w !== null)("a scratch fitted to wholeDecodeBytes holds the record and every decoded stream of its first block in the kernel's memory", () => {
    const rb = w as NonNullable<typeof w>;
    const scratch = new Scratch(rb);
    const need = wholeDecodeBytes(record.subarray(0, 200), record.length);
    expect(need).not.toBeNull();
    scratch.reset();
    scratch.fit(need as number);
    const r = scratch.take(record.length);
    record.copy(r);
    const streams = unpackRecord(r, undefined, undefined, undefined, scratch);
    const mine = rb.buf.buffer;
    expect(r.buffer).toBe(mine);
    const nonEmpty = streams.filter((s) => s !== null && s.length > 0);
    expect(nonEmpty.length).toBeGreaterThan(5);
    for (const s of nonEmpty) expect((s as Buffer).buffer).toBe(mine);
    // Decoded the same as without a scratch.
    const plain = unpackRecord(record);
    streams.forEach((s, i) => expect(Buffer.compare(s as Buffer, plain[i] as Buffer)).toBe(0));
    // A table that does not fit in the bytes given, or no block magic: null.
    expect(wholeDecodeBytes(record.subarray(0, 12), record.length)).toBeNull();
    expect(wholeDecodeBytes(Buffer.alloc(64), 64)).toBeNull();
  });
});
