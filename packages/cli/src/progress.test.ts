import { describe, expect, it } from "vitest";
import { memoryIO } from "./io.js";
import { CLEAR_LINE, progressLine, startProgress } from "./progress.js";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("progress on stderr", () => {
  it("says how much of the work is done, with rate and ETA, and never more than the total in a later pass", () => {
    expect(progressLine("rebuild", 10_000, 450e6, 1e9)).toBe("rebuild: 450.0 MB of 1.00 GB read, 45%, 45.0 MB/s, ETA 12 s, 10 s");
    expect(progressLine("verify", 3_000, 1.5e9, 1e9)).toBe("verify: 500.0 MB of 1.00 GB read (pass 2), 50%, 500.0 MB/s, ETA 1 s, 3 s");
    expect(progressLine("restore", 2_000, 250e6, 1e9, "written")).toBe("restore: 250.0 MB of 1.00 GB written, 25%, 125.0 MB/s, ETA 6 s, 2 s");
    expect(progressLine("diet", 2_000, null, 1e9)).toBe("diet: 2 s");
    expect(progressLine("diet", 75_000, null, null)).toBe("diet: 1 min 15 s");
  });

  it("prints nothing when stderr is not a terminal", async () => {
    const io = memoryIO({ stderrIsTTY: false, env: { HANKWEAVE_PROGRESS_AFTER_MS: "0", HANKWEAVE_PROGRESS_EVERY_MS: "5" } });
    const p = startProgress(io, "rebuild", { counter: "read", total: 1e6 });
    await wait(60);
    await p.io.stdout("result\n");
    p.stop();
    expect(io.err()).toBe("");
    expect(io.out()).toBe("result\n");
  });

  it("draws a line after a second on a terminal and clears it when done", async () => {
    const io = memoryIO({ stderrIsTTY: true });
    const p = startProgress(io, "rebuild", null);
    await wait(1_400);
    p.stop();
    expect(io.err()).toMatch(/rebuild: 1 s/);
    expect(io.err().endsWith(CLEAR_LINE)).toBe(true);
  });

  it("clears the line before any output and does not redraw it while output flows", async () => {
    const events: string[] = [];
    const io = memoryIO({
      stderrIsTTY: true,
      env: { HANKWEAVE_PROGRESS_AFTER_MS: "100", HANKWEAVE_PROGRESS_EVERY_MS: "10" },
      stdout: (c) => void events.push(`out:${String(c)}`),
      stderr: (c) => void events.push(`err:${c}`),
    });
    const p = startProgress(io, "cat", { counter: "read", total: 1e6 });
    await wait(200);
    expect(events.some((e) => e.startsWith(`err:${CLEAR_LINE}cat: `))).toBe(true);
    await p.io.stdout("line 1\n");
    const at = events.indexOf("out:line 1\n");
    expect(events[at - 1]).toBe(`err:${CLEAR_LINE}`);
    await wait(50); // quieter than 100 ms: no redraw yet
    expect(events.slice(at + 1).filter((e) => e.includes("cat: "))).toEqual([]);
    await wait(200); // quiet again: the line comes back …
    expect(events.at(-1)).toMatch(/^err:\r\x1b\[2Kcat: /);
    p.io.stderr("warning: x\n"); // … and is cleared before a diagnostic too
    expect(events.slice(-2)).toEqual([`err:${CLEAR_LINE}`, "err:warning: x\n"]);
    p.stop();
    expect(events.at(-1)).toBe("err:warning: x\n"); // nothing drawn since: nothing to clear
  });
});
