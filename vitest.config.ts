// The test suite's one config: one vitest project per package (each package's own
// `vitest.config.ts`: name, include, timeouts); tests run from src/ without a build step (package.json
// "exports" point at src/index.ts, executed by vite's transformer).
//
// Two workers: most int tests wait on fsync and child processes, so two files at a time on a
// 2-core machine nearly halve the wall (vitest's default is cores − 1 = one file at a time).
// The SERIAL files (the SIGKILL crash loops, which already run 4–6 children at once, calibrate kill
// points on a run's timing and bound their wall; the tests that assert a wall bound) run afterwards
// in a group of their own (`sequence.groupOrder` 1), one file at a time in one fork, never beside
// another file.
import { configDefaults, defineConfig } from "vitest/config";

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

export default defineConfig({
  test: {
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
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
          pool: "forks",
          poolOptions: { forks: { singleFork: true } },
          sequence: { groupOrder: 1 },
          setupFiles: SETUP,
        },
      },
    ],
  },
});
