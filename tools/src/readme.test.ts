import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ERROR_CODES } from "@hankweave-journal/core";

const readme = readFileSync(fileURLToPath(new URL("../../README.md", import.meta.url)), "utf8");

describe("README", () => {
  it("opens with the two commands that work on a fresh clone", () => {
    const commands = [...readme.matchAll(/^```(?:sh|bash)?\n([^`]+?)\n```/gm)].map((m) => m[1]!.trim());
    expect(commands[0]).toBe("npm ci && npm start");
    expect(commands[1]).toBe("npm ci && npm test");
  });

  it("lists every stable error code", () => {
    const missing = Object.keys(ERROR_CODES).filter((code) => !readme.includes(`\`${code}\``));
    expect(missing).toEqual([]);
  });

  it("the CI script runs exactly the README's test command", () => {
    const ci = readFileSync(fileURLToPath(new URL("../../.ci/run", import.meta.url)), "utf8");
    const last = ci.trim().split("\n").at(-1);
    expect(last).toBe("npm ci && npm test");
  });
});
