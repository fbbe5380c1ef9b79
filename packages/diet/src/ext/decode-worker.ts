/**
 * Worker thread of the extended diet's restore and verify (started by `decodeBlocksOnWorkers`):
 * opens the container itself and answers `{id, k}` with block k's original bytes or an error with
 * its code. A block the WebAssembly kernel rebuilt is a view of its shared memory (`region`: no
 * copy, no transfer), kept until `{free: region}` says the consumer is done with it; one the
 * JavaScript decoder rebuilt is a buffer of its own, transferred, and `{recycle}` gives it back
 * to rebuild a later such block into (no 8 MiB of garbage per block).
 */
import { parentPort, workerData } from "node:worker_threads";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { ExtSource, type ExtExpect } from "./ext-source.js";
import { BLOCK_TARGET_BYTES, PACK_WINDOW_BYTES } from "./format.js";
import { threadRebuilder } from "./rebuild-wasm.js";

const init = workerData as { path: string | null; expect?: ExtExpect };
/**
 * The decoded-frame cache of a worker (FRAME_CACHE_BYTES less 8 MiB): a block's pieces lie within
 * the pack's last PACK_WINDOW_BYTES when it was written, and a worker rebuilds blocks in order, so
 * the window and 4 MiB of slack hold what it reads unless one block adds more than 4 MiB of new
 * pieces (then a frame may be decoded again: time, never bytes). On both 1 GB bench inputs each
 * worker still decoded every frame once (real 258 of 258 frames, body-heavy 158 and 157), as with
 * 36 MiB, in 8 MiB less WebAssembly memory (26 MiB decoded a frame twice).
 */
const WORKER_FRAME_CACHE_BYTES = PACK_WINDOW_BYTES + 4 * 1024 * 1024;
const open = (path: string, expect: ExtExpect) => ExtSource.open(layoutOf("/"), expect, path, WORKER_FRAME_CACHE_BYTES);
/** Null until `{open}` names the container (a worker started before it was written: `DecodeCrew`). */
let src: ExtSource | null = init.path === null ? null : open(init.path, init.expect as ExtExpect);
// Started early: compile the rebuild kernel while the container is still being written.
if (src === null) threadRebuilder();
/** Buffers given back, reused for the next blocks. */
const spare: ArrayBuffer[] = [];
/** A block is cut at the first line end after BLOCK_TARGET_BYTES: most fit in this. */
const BLOCK_BUFFER_BYTES = BLOCK_TARGET_BYTES + 1024 * 1024;

/**
 * A buffer for a block the JavaScript decoder rebuilds: a given-back one of at least `size` bytes
 * (left in `spare`: the kernel may rebuild the block), else, without a kernel, a new one with
 * room for the next blocks; else none (the decoder makes one if the kernel gives the block up).
 */
function spareFor(size: number): Buffer | undefined {
  while (spare.length > 0 && (spare.at(-1) as ArrayBuffer).byteLength < size) spare.pop();
  if (spare.length > 0) return Buffer.from(spare.at(-1) as ArrayBuffer);
  return threadRebuilder() === null ? Buffer.from(new ArrayBuffer(Math.max(size, BLOCK_BUFFER_BYTES))) : undefined;
}

parentPort?.on("message", (m: { id: number; k: number } | { recycle: ArrayBuffer } | { free: number } | { open: { path: string; expect: ExtExpect } }) => {
  if ("open" in m) {
    // As at the start: a container that does not open ends the worker with its error.
    src = open(m.open.path, m.open.expect);
    return;
  }
  if ("recycle" in m) {
    if (spare.length < 4) spare.push(m.recycle);
    return;
  }
  if ("free" in m) {
    src?.freeRegion(m.free);
    return;
  }
  try {
    if (src === null) throw new Error("no container opened");
    const { data, region } = src.decodeBytes(m.k, spareFor(src.blocks[m.k].originalBytes), true);
    if (region >= 0) parentPort?.postMessage({ id: m.id, data, region });
    else {
      if (data.buffer === spare.at(-1)) spare.pop();
      parentPort?.postMessage({ id: m.id, data }, [data.buffer as ArrayBuffer]);
    }
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: { code: isJournalError(e) ? e.code : null, message: (e as Error).message, details: isJournalError(e) ? e.details : {} } });
  }
});
