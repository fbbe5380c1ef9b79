import { defineProject } from "vitest/config";

export default defineProject({
  test: {
    name: "fleet",
    include: ["src/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
