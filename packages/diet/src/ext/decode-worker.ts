/**
 * Worker thread of the extended diet's restore and verify (started by `decodeBlocksOnWorkers`):
 * opens the container itself and answers `{id, k}` with block k's original bytes (transferred) or
 * an error with its code. `{recycle}` gives back a block's buffer once the consumer is done with
 * it; the next block is rebuilt into it (no 8 MiB of garbage per block).
 */
import { parentPort, workerData } from "node:worker_threads";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { ExtSource, type ExtExpect } from "./ext-source.js";
import { BLOCK_TARGET_BYTES } from "./format.js";
import { threadRebuilder } from "./rebuild-wasm.js";

const init = workerData as { path: string | null; expect?: ExtExpect };
/** Null until `{open}` names the container (a worker started before it was written: `DecodeCrew`). */
let src: ExtSource | null = init.path === null ? null : ExtSource.open(layoutOf("/"), init.expect as ExtExpect, init.path);
// Started early: compile the rebuild kernel while the container is still being written.
if (src === null) threadRebuilder();
/** Buffers given back, reused for the next blocks. */
const spare: ArrayBuffer[] = [];
/** A block is cut at the first line end after BLOCK_TARGET_BYTES: most fit in this. */
const BLOCK_BUFFER_BYTES = BLOCK_TARGET_BYTES + 1024 * 1024;

function outFor(size: number): Buffer {
  while (spare.length > 0) {
    const ab = spare.pop() as ArrayBuffer;
    if (ab.byteLength >= size) return Buffer.from(ab);
  }
  return Buffer.from(new ArrayBuffer(Math.max(size, BLOCK_BUFFER_BYTES)));
}

parentPort?.on("message", (m: { id: number; k: number } | { recycle: ArrayBuffer } | { open: { path: string; expect: ExtExpect } }) => {
  if ("open" in m) {
    // As at the start: a container that does not open ends the worker with its error.
    src = ExtSource.open(layoutOf("/"), m.open.expect, m.open.path);
    return;
  }
  if ("recycle" in m) {
    if (spare.length < 4) spare.push(m.recycle);
    return;
  }
  try {
    if (src === null) throw new Error("no container opened");
    const { data } = src.decodeBytes(m.k, outFor(src.blocks[m.k].originalBytes));
    parentPort?.postMessage({ id: m.id, data }, [data.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: { code: isJournalError(e) ? e.code : null, message: (e as Error).message, details: isJournalError(e) ? e.details : {} } });
  }
});
