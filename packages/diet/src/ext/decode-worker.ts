/**
 * Worker thread of the extended diet's restore and verify (started by `DecodePool`): opens the
 * container itself and answers `{k}` with block k's original bytes (transferred) or an error
 * with its code.
 */
import { parentPort, workerData } from "node:worker_threads";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { ExtSource, type ExtExpect } from "./ext-source.js";

const { path, expect } = workerData as { path: string; expect: ExtExpect };
const src = ExtSource.open(layoutOf("/"), expect, path);

parentPort?.on("message", (m: { id: number; k: number }) => {
  try {
    const { data } = src.decodeBytes(m.k);
    parentPort?.postMessage({ id: m.id, data }, [data.buffer as ArrayBuffer]);
  } catch (e) {
    parentPort?.postMessage({ id: m.id, error: { code: isJournalError(e) ? e.code : null, message: (e as Error).message, details: isJournalError(e) ? e.details : {} } });
  }
});
