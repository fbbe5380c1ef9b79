import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ERROR_CODES } from "@hankweave-journal/core";
import { COMMANDS } from "@hankweave-journal/cli";
import { errorTable } from "./error-table.js";

const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

describe("README", () => {
  it("is a manual, not a history: at most 600 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(600);
  });

  it("says what this is first, then gives exactly the two commands that work on a fresh clone", () => {
    const firstScreen = readme.split("\n").slice(0, 30).join("\n");
    expect(firstScreen).toMatch(/execution directories the Hankweave runtime leaves behind/);
    expect(firstScreen).toMatch(/```console\n\$ hankweave-journal /); // one real command with its output
    const commands = [...readme.matchAll(/^```(?:sh|bash)?\n([^`]+?)\n```/gm)].map((m) => m[1]!.trim());
    expect(commands.slice(0, 2)).toEqual(["npm ci && npm start", "npm ci && npm test"]);
  });

  it("carries the error-code table generated from ERROR_CODES, current (node tools/assemble-readme.mjs)", () => {
    const m = /<!-- error-codes:start -->\n([\s\S]*)<!-- error-codes:end -->/.exec(readme);
    expect(m?.[1]).toBe(errorTable());
    const missing = Object.keys(ERROR_CODES).filter((code) => !readme.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it("shows the library example that the repo type-checks and the pack test compiles against the installed package", () => {
    const example = readFileSync(fileURLToPath(new URL("../../packages/hankweave-journal/src/test-consumer/readme-example.ts", import.meta.url)), "utf8");
    const code = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeDefined();
    expect(example).toContain(code!);
  });

  it("names every command", () => {
    const missing = COMMANDS.map((c) => c.name).filter((name) => !readme.includes(`\`${name} `) && !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it("the CI script runs exactly the README's test command", () => {
    const ci = readFileSync(fileURLToPath(new URL("../../.ci/run", import.meta.url)), "utf8");
    const last = ci.trim().split("\n").at(-1);
    expect(last).toBe("npm ci && npm test");
  });
});
