/**
 * Worker thread of the extended diet's column pass (started by `ColumnPool` through
 * `startWorker`): receives `{id, input, level}`, answers `{id, block}` or `{id, error}`.
 */
import { parentPort } from "node:worker_threads";
import { encodeColumns } from "./block-codec.js";

parentPort?.on("message", (m: { id: number; input: Uint8Array; level: number }) => {
  try {
    const input = Buffer.from(m.input.buffer, m.input.byteOffset, m.input.byteLength);
    parentPort?.postMessage({ id: m.id, block: encodeColumns(input, m.level) });
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: { message: (e as Error).message } });
  }
});
