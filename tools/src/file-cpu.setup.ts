/**
 * A vitest setup file of every project (vitest.workspace.ts): after each test file, appends one line
 * `{"file", "cpuS", "childCpuS"}` to `test-artifacts/file-cpu.jsonl`: the CPU seconds
 * the file's worker process spent (user + system, from /proc/self/stat) and those of the child
 * processes it waited for, counted from the setup (before the file is imported) to its last hook.
 * With two workers the suite's wall is bounded below by its CPU seconds over the cores, so this
 * is where a file's cost shows. Linux only (elsewhere nothing is written); never fails a test.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect } from "vitest";

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../test-artifacts/file-cpu.jsonl");
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** [own, children] CPU seconds of this process, or null when /proc is not there. */
function cpuNow(): [number, number] | null {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th field.
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const n = (i: number): number => Number(f[i - 3]);
    return [(n(14) + n(15)) / TICKS, (n(16) + n(17)) / TICKS];
  } catch {
    return null;
  }
}

const start = cpuNow();
afterAll(() => {
  const end = cpuNow();
  if (start === null || end === null) return;
  const state = expect.getState();
  const file = path.relative(path.resolve(OUT, "../.."), state.testPath ?? "");
  try {
    mkdirSync(path.dirname(OUT), { recursive: true });
    appendFileSync(OUT, JSON.stringify({ file, cpuS: +(end[0] - start[0]).toFixed(2), childCpuS: +(end[1] - start[1]).toFixed(2) }) + "\n");
  } catch {
    // a measurement, never a failure
  }
});
