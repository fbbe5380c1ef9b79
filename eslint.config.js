// The repo's lint rules (`npm run lint`, part of `npm test`). A small set of house rules that the type
// checker cannot see; no type-aware rules (the parser only, so a run takes seconds).
import tseslint from "typescript-eslint";

/** Modules that core's sources must not import: core is pure (no I/O, no threads, no processes). */
const NODE_MODULES = ["node:*", "fs", "fs/*", "path", "path/*", "os", "worker_threads", "child_process", "process"];

/** Deep imports into another package's private files. */
const DEEP_IMPORTS = [
  { group: ["@hankweave-journal/*/src", "@hankweave-journal/*/src/*"], message: "import the package's entry point (@hankweave-journal/<pkg>), not its private files" },
  { group: ["@mongodb-js/zstd/*"], message: "import @mongodb-js/zstd itself, not its private files" },
];

const TS_FILES = ["**/*.ts", "**/*.mts", "**/*.cts"];
const JS_FILES = ["**/*.js", "**/*.mjs", "**/*.cjs"];
const TEST_FILES = ["**/*.test.ts", "**/*.int.test.ts"];

/** `no-restricted-syntax` entries shared by every source file (the rule's options are replaced, not merged, per block). */
const NO_EXPORT_ALL = { selector: "ExportAllDeclaration", message: "no `export *`: name what a module re-exports" };
const NO_EVAL_WORKER = { selector: "Property[key.name='eval'][value.value=true]", message: "no `eval: true` workers: start a worker from a real module that tsc checks" };
const NO_DEFAULT_EXPORT = { selector: "ExportDefaultDeclaration", message: "no default exports in package sources: use named exports" };

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/test-artifacts/**", "fixtures/**", "**/fixtures/**"] },
  {
    files: [...TS_FILES, ...JS_FILES],
    // The timer globals are declared so that no-implied-eval sees `setTimeout("code")`.
    languageOptions: { parser: tseslint.parser, ecmaVersion: "latest", sourceType: "module", globals: { setTimeout: "readonly", setInterval: "readonly", setImmediate: "readonly", globalThis: "readonly" } },
    // Other tools’ disable comments (e.g. no-control-regex) name rules this small set does not enable.
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "no-eval": "error",
      "no-implied-eval": "error",
      "no-new-func": "error",
      "no-restricted-imports": ["error", { patterns: DEEP_IMPORTS }],
      "no-restricted-syntax": ["error", NO_EXPORT_ALL, NO_EVAL_WORKER],
    },
  },
  {
    // A test may pass `{ eval: true }` to prove that the worker starter refuses it.
    files: TEST_FILES,
    rules: { "no-restricted-syntax": ["error", NO_EXPORT_ALL] },
  },
  {
    files: ["packages/*/src/**/*.ts"],
    ignores: TEST_FILES,
    rules: { "no-restricted-syntax": ["error", NO_EXPORT_ALL, NO_EVAL_WORKER, NO_DEFAULT_EXPORT] },
  },
  {
    // The core purity fence (also tested by packages/core/src/purity.int.test.ts, which covers testing/ too).
    files: ["packages/core/src/**/*.ts"],
    ignores: TEST_FILES,
    rules: {
      "no-restricted-imports": ["error", {
        paths: NODE_MODULES.filter((m) => !m.includes("*")).map((name) => ({ name, message: "core is pure: no I/O, threads or processes (put it in journal, cas, diet or cli)" })),
        patterns: [...DEEP_IMPORTS, { group: NODE_MODULES.filter((m) => m.includes("*")), message: "core is pure: no node:* modules (put it in journal, cas, diet or cli)" }],
      }],
    },
  },
);
