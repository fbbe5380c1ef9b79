// The test suite's projects (the design card's top-level file): one vitest project per package
// (each package's own `vitest.config.ts`: name, include, timeouts); tests run from src/ without a
// build step (package.json "exports" point at src/index.ts, executed by vite's transformer).
//
// The SERIAL files (the SIGKILL crash loops, which already run 4–6 children at once, calibrate kill
// points on a run's timing and bound their wall) run afterwards in a project of their own
// (`sequence.groupOrder` 1), one file at a time in one fork, never beside another file. The root
// options (two workers) are in vitest.config.ts.
import { configDefaults } from "vitest/config";

/** Records each file's CPU seconds in test-artifacts/file-cpu.jsonl (tools/run-tests.mjs sums them). */
const SETUP = [new URL("./tools/src/file-cpu.setup.ts", import.meta.url).pathname];

const PACKAGES = [
  "packages/core",
  "packages/journal",
  "packages/cas",
  "packages/diet",
  "packages/state",
  "packages/audit",
  "packages/fleet",
  "packages/cli",
  "packages/hankweave-journal",
  "tools",
];

/** Repo-relative test files that must not share the machine with another test file. */
export const SERIAL = [
  "packages/diet/src/crash.int.test.ts",
  "packages/diet/src/ext/ext-crash.int.test.ts",
  "packages/journal/src/crash-safety.int.test.ts",
  "packages/state/src/crash-safety.int.test.ts",
  "packages/fleet/src/export/export-crash.int.test.ts",
];

export default [
  ...PACKAGES.map((dir) => ({
    extends: `./${dir}/vitest.config.ts`,
    root: `./${dir}`,
    test: {
      exclude: [...configDefaults.exclude, ...SERIAL.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1))],
      sequence: { groupOrder: 0 },
      setupFiles: SETUP,
    },
  })),
  {
    test: {
      name: "serial",
      include: SERIAL,
      // The longest of the package defaults; every crash test also sets its own bound.
      testTimeout: 300_000,
      hookTimeout: 300_000,
      pool: "forks" as const,
      poolOptions: { forks: { singleFork: true } },
      sequence: { groupOrder: 1 },
      setupFiles: SETUP,
    },
  },
];
