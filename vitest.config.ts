// The root options of the test suite; its projects are in vitest.workspace.ts.
//
// Two workers: most int tests wait on fsync and child processes, so two files at a time on a
// 2-core machine nearly halve the wall (vitest's default is cores − 1 = one file at a time).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    maxWorkers: 2,
    minWorkers: 1,
  },
});
