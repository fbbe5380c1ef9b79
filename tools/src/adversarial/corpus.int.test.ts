// The adversarial corpus of issue 14 (see README.md here): every case checks the exit code, the
// stable code, no stack trace, no hang, byte-identical files outside what the command may change,
// and that no journal line is lost.
import * as fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { corpusCases } from "./corpus.js";
import { corpusBase, runCase } from "./harness.js";
import type { KeysCase } from "./keys/cases.js";

const cases = corpusCases();
const base = corpusBase();
let bytesLost = 0;
afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

describe("the adversarial corpus", () => {
  it("has at least 150 cases covering every command", () => {
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const commands = new Set(cases.map((c) => c.command));
    for (const c of ["cat", "stats", "repair", "rebuild", "state", "diff", "diet", "restore", "audit", "index", "query", "verify", "report", "summary", "blame", "export"]) {
      expect(commands.has(c), c).toBe(true);
    }
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  for (const family of [...new Set(cases.map((c) => c.family))]) {
    describe(family, () => {
      it.each(cases.filter((c) => c.family === family).map((c) => [c.name, c] as const))("%s", async (_name, c) => {
        const o = await runCase(c, base);
        bytesLost += o.bytesLost;
        const extra = (c as KeysCase).check?.(o);
        expect([...o.problems, ...(extra ? [extra] : [])]).toEqual([]);
      });
    });
  }

  it("lost no journal byte in any case", () => {
    expect(bytesLost).toBe(0);
  });
});
