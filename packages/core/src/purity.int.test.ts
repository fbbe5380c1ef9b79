import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const SRC = path.dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [p] : [];
  });
}

it("core's production and testing sources import no node:* module (and no fs/path/process)", () => {
  const files = sources(SRC);
  expect(files.length).toBeGreaterThan(10);
  const offenders = files.filter((f) => /from\s+["'](node:|fs["']|path["']|os["']|child_process["'])/.test(readFileSync(f, "utf8")));
  expect(offenders.map((f) => path.relative(SRC, f))).toEqual([]);
});

it("the production entry point does not reach the testing helpers", () => {
  const index = readFileSync(path.join(SRC, "index.ts"), "utf8");
  expect(index).not.toMatch(/testing/);
  expect(index).not.toMatch(/fast-check/);
});
