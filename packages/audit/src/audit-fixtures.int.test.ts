import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { auditExecution } from "./audit-run.js";
import { CONF, copyExecution, journalLines, plantDefects } from "./testing/plant.js";

const FIXTURES = path.resolve(import.meta.dirname, "../../../fixtures/audit");
const CASES = readdirSync(FIXTURES).filter((d) => existsSync(path.join(FIXTURES, d, "expected.json"))).sort();

describe("golden audit fixtures", () => {
  it("has the pristine journal and the ten planted defects", () => {
    expect(CASES).toHaveLength(11);
  });

  for (const name of CASES) {
    it(`${name}: reports exactly the expected errors and warnings`, async () => {
      const exec = path.join(mkdtempSync(path.join(os.tmpdir(), "hw-fixture-")), name);
      cpSync(path.join(FIXTURES, name), exec, { recursive: true });
      const expected = JSON.parse(readFileSync(path.join(exec, "expected.json"), "utf8")) as { errorsAndWarnings: { code: string; line: number }[] };
      const a = await auditExecution(exec);
      const got = a.findingList.filter((f) => f.severity !== "info").map((f) => ({ code: f.code, line: f.line }));
      expect(got).toEqual(expected.errorsAndWarnings);
    });
  }

  it.runIf(existsSync(CONF))("are what the planters make from the conformance journal today", () => {
    const lines = journalLines(copyExecution("budget-loop-level-replay"));
    for (const [code, p] of Object.entries(plantDefects(lines))) {
      const file = layoutOf(path.join(FIXTURES, `planted-${code.toLowerCase().replace(/_/g, "-")}`)).journal;
      expect(readFileSync(file, "utf8"), code).toBe(p.text);
    }
    expect(readFileSync(layoutOf(path.join(FIXTURES, "ok-budget-loop-level")).journal, "utf8")).toBe(lines.join("\n") + "\n");
  });
});
