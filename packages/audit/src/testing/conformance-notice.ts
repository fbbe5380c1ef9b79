/**
 * The conformance tests' guard, in one place (vitest only: not exported from the testing index,
 * which tools load outside vitest). Without `../shared/conformance` the tests that read it cannot
 * run: one test says so instead (and fails when REQUIRE_CONFORMANCE is set, as in CI setups that
 * must have it).
 */
import { existsSync } from "node:fs";
import { expect, it } from "vitest";
import { CONF } from "./plant.js";

/** True when the conformance folder exists; otherwise registers the test that reports its absence. */
export function conformancePresent(): boolean {
  if (existsSync(CONF)) return true;
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(existsSync(CONF)).toBe(false);
  });
  return false;
}
