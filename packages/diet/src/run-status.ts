/**
 * How the last run of a journal ended, found by reading `state.transition` lines backwards from
 * the end (the answer is almost always in the last chunk). Only RunStarted / RunCompleted /
 * RunFailed / RunCrashed decide it; the transition of the last such line wins.
 */
import type { FileHandle } from "node:fs/promises";
import { sniffEventType } from "@hankweave-journal/journal";

/** The status of the last run, or `none` when the journal holds no run transition. */
export type LastRunStatus = "running" | "completed" | "failed" | "crashed" | "none";

const RUN_STATUS: Record<string, LastRunStatus> = {
  RunStarted: "running",
  RunCompleted: "completed",
  RunFailed: "failed",
  RunCrashed: "crashed",
};
const BACKWARD_CHUNK_BYTES = 1024 * 1024;
const TRANSITION_MARKER = Buffer.from('"transitionType":"Run', "latin1");
const RUN_TYPE_MARKER = Buffer.from('"type":"Run', "latin1");

/** The run status decided by one line, or undefined when the line says nothing about runs. */
export function runStatusOfLine(bytes: Buffer): LastRunStatus | undefined {
  if (sniffEventType(bytes) !== "state.transition") return undefined;
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  const t = (v as { data?: { transition?: { type?: unknown } } })?.data?.transition?.type;
  return typeof t === "string" && Object.hasOwn(RUN_STATUS, t) ? RUN_STATUS[t] : undefined; // never "constructor" → Object
}

/** Read `fh` (of `size` bytes) backwards until a run transition is found. */
export async function lastRunStatus(fh: FileHandle, size: number): Promise<LastRunStatus> {
  let end = size;
  let carry: Buffer = Buffer.alloc(0);
  // An unterminated final fragment is not an event (format §2.1): the first line met is skipped then.
  let skipFirst = false;
  if (size > 0) {
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    skipFirst = last[0] !== 10;
  }
  while (end > 0) {
    const start = Math.max(0, end - BACKWARD_CHUNK_BYTES);
    const buf = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    const data = carry.length > 0 ? Buffer.concat([buf.subarray(0, got), carry]) : buf.subarray(0, got);
    let right = data.length;
    for (let nl = data.lastIndexOf(10, right - 1); nl >= 0; nl = right > 0 ? data.lastIndexOf(10, right - 1) : -1) {
      const line = data.subarray(nl + 1, right);
      const skip = skipFirst;
      skipFirst = false;
      // Cheap filter first: most lines are not run transitions.
      if (!skip && (line.indexOf(TRANSITION_MARKER) >= 0 || line.indexOf(RUN_TYPE_MARKER) >= 0)) {
        const s = runStatusOfLine(line);
        if (s !== undefined) return s;
      }
      right = nl;
      if (right === 0) break;
    }
    carry = Buffer.from(data.subarray(0, right));
    end = start;
  }
  if (carry.length > 0 && !skipFirst) return runStatusOfLine(carry) ?? "none";
  return "none";
}
