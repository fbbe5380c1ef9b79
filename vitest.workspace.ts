// One vitest project per package; tests run from src/ without a build step
// (package.json "exports" point at src/index.ts, executed by vite's transformer).
export default [
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
