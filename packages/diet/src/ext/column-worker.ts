/**
 * Worker thread of the extended diet's block work (started by `ColumnPool` through
 * `startWorker`): receives a `ColumnJob`, answers `{id, done}`, `{id, out}` or `{id, error}`.
 * Keeps each block's column pass until its seal arrives.
 */
import { parentPort } from "node:worker_threads";
import { runColumnJob, type ColumnJob, type HeldBlock } from "./column-pool.js";

const blocks = new Map<number, HeldBlock>();

parentPort?.on("message", (m: ColumnJob) => {
  try {
    const { answer, transfer } = runColumnJob(m, blocks);
    parentPort?.postMessage(answer, transfer);
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: { message: (e as Error).message } });
  }
});
