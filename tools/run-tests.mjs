#!/usr/bin/env node
// Runs every vitest project of vitest.workspace.ts (two workers, vitest.config.ts; the crash loops after, one at a time), then prints one plain closing line `tests: N passed, N failed, N skipped`.
// Tests that could not run because an input is absent (named "… is absent: these tests cannot run") are counted as
// skipped, not passed. Exit code: vitest's (non-zero when anything failed).
import { spawnSync } from "node:child_process";
import { readFileSync, mkdirSync, existsSync, rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "test-artifacts", "vitest-results.json");
const cpuLog = join(root, "test-artifacts", "file-cpu.jsonl"); // written by tools/src/file-cpu.setup.ts
mkdirSync(dirname(out), { recursive: true });
rmSync(cpuLog, { force: true });
const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
const res = spawnSync(
  process.execPath,
  [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${out}`, ...process.argv.slice(2)],
  { cwd: root, stdio: "inherit" },
);
let passed = 0, failed = 0, skipped = 0;
if (existsSync(out)) {
  const report = JSON.parse(readFileSync(out, "utf8"));
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      const absent = /is absent: these tests cannot run/.test(t.title ?? "");
      if (t.status === "passed" && !absent) passed++;
      else if (t.status === "failed") failed++;
      else skipped++;
    }
    if ((file.assertionResults ?? []).length === 0 && file.status === "failed") failed++;
  }
}
if (existsSync(cpuLog)) {
  const rows = readFileSync(cpuLog, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const cpu = rows.reduce((s, r) => s + r.cpuS + r.childCpuS, 0);
  console.log(`cpu: ${cpu.toFixed(0)} s in ${rows.length} test files (workers and their children; per file in ${cpuLog})`);
}
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
const code = res.status ?? 1;
process.exit(code !== 0 ? code : failed > 0 ? 1 : passed === 0 ? 1 : 0);
