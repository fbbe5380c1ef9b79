import { describe, expect, it } from "vitest";
import { memoryIO } from "./io.js";
import { progressLine, startProgress } from "./progress.js";

describe("progress on stderr", () => {
  it("says how much of the journal was read, with the pass when it is read again", () => {
    expect(progressLine("rebuild", 12_400, 450e6, 1e9)).toBe("rebuild: 450.0 MB read of 1.00 GB, 45%, 12 s");
    expect(progressLine("verify", 3_000, 1.5e9, 1e9)).toBe("verify: 1.50 GB read of 1.00 GB, 50% (pass 2), 3 s");
    expect(progressLine("diet", 2_000, null, 1e9)).toBe("diet: 2 s");
  });

  it("prints nothing when stderr is not a terminal", async () => {
    const io = memoryIO({ stderrIsTTY: false });
    const stop = startProgress(io, "rebuild", "/nonexistent");
    await new Promise((r) => setTimeout(r, 1_400));
    stop();
    expect(io.err()).toBe("");
  });

  it("draws a line after a second on a terminal and clears it when done", async () => {
    const io = memoryIO({ stderrIsTTY: true });
    const stop = startProgress(io, "rebuild", "/nonexistent");
    await new Promise((r) => setTimeout(r, 1_400));
    stop();
    expect(io.err()).toMatch(/rebuild: 1 s/);
    expect(io.err().endsWith("\r\x1b[2K")).toBe(true);
  });
});
