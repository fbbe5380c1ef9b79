import { afterAll, describe, expect, it } from "vitest";
import { planDiet } from "./diet.js";
import { DIET_READ_CHUNK_BYTES } from "./diet-scan.js";
import { codeOf, rmExec, tempExec } from "./test-helpers.js";

// The scan searches CONTENT_REF_MARKER once per read chunk and checks only the lines that hold it
// (CONTENT_REF_PRESENT): a cas-shaped contentRef at a body site is found wherever it sits in a
// chunk, after other marked lines, and across a chunk boundary.

const made: string[] = [];
afterAll(() => made.forEach(rmExec));

const line = (type: string, data: unknown): string => JSON.stringify({ id: "1", timestamp: "t", type, data });
const SITE_REF = line("file.updated", { path: "a", contentRef: { sha256: "someone", ref: "cas" } });
// The marker in a line that is no body site: allowed.
const OTHER_REF = line("tool.result", { contentRef: { sha256: "x", ref: "cas" } });
const filler = (bytes: number): string[] => {
  const out: string[] = [];
  for (let n = 0; n < bytes; n += 1000) out.push(line("info", { text: "y".repeat(950) }));
  return out;
};

async function planCode(lines: string[]): Promise<string | undefined> {
  const e = tempExec(lines.join("\n") + "\n");
  made.push(e);
  return codeOf(planDiet(e, { force: true }));
}

describe("the scan's per-chunk contentRef search", () => {
  it("finds a site contentRef mid-chunk after a marked line that is no site, and lets that line alone pass", async () => {
    expect(await planCode([...filler(10_000), OTHER_REF, ...filler(10_000)])).toBe("ok");
    expect(await planCode([...filler(10_000), OTHER_REF, ...filler(5_000), SITE_REF, ...filler(5_000)])).toBe("CONTENT_REF_PRESENT");
  });

  it("finds it in the second chunk, and in a line that spans the chunk boundary", async () => {
    const before = filler(DIET_READ_CHUNK_BYTES - 100_000);
    expect(await planCode([...before, ...filler(200_000), SITE_REF])).toBe("CONTENT_REF_PRESENT");
    const used = before.join("\n").length + 1;
    const pad = DIET_READ_CHUNK_BYTES - used - 40; // SITE_REF starts 40 bytes before the boundary
    const spanning = [...before, line("info", { text: "z".repeat(pad - 60) }), SITE_REF];
    expect(spanning.join("\n").indexOf(SITE_REF)).toBeLessThan(DIET_READ_CHUNK_BYTES);
    expect(spanning.join("\n").indexOf(SITE_REF) + SITE_REF.length).toBeGreaterThan(DIET_READ_CHUNK_BYTES);
    expect(await planCode(spanning)).toBe("CONTENT_REF_PRESENT");
  });
});
