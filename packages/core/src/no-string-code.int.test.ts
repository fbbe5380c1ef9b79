import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

// Code is code (issue 17, item 4): no source file runs JavaScript from a string — no
// `new Worker(src, { eval: true })`, no `new Function(...)`, no `eval(...)`. Workers start from
// module files with startWorker (@hankweave-journal/cas); test files are left aside (they check
// that startWorker refuses `eval`).

const PACKAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const STRING_CODE = /\beval\s*:\s*true\b|\bnew\s+Function\s*\(|(?<![.\w])eval\s*\(/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || e.name === "dist" ? [] : sources(p);
    return /\.(ts|mts|js|mjs|cjs)$/.test(e.name) && !/\.test\.[cm]?[jt]s$/.test(e.name) ? [p] : [];
  });
}

it("the pattern catches each way of running code from a string and nothing else", () => {
  for (const bad of ["new Worker(SRC, { eval: true })", "new Worker(s, {eval:true, execArgv: []})", "new Function(`return 1`)()", "const f = new Function ('a', 'return a');", "eval(text)"]) {
    expect(STRING_CODE.test(bad), bad).toBe(true);
  }
  for (const fine of ["startWorker(new URL('./x.worker.js', import.meta.url))", "const evaluation = 1;", "retrieval(x)", "opts.eval(x)", "{ eval: false }"]) {
    expect(STRING_CODE.test(fine), fine).toBe(false);
  }
});

it("no source file under packages/*/src (test files aside) runs code from a string", () => {
  const files = readdirSync(PACKAGES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => {
      try {
        return sources(path.join(PACKAGES, d.name, "src"));
      } catch {
        return []; // a package without src/
      }
    });
  expect(files.length).toBeGreaterThan(100);
  const offenders = files
    .filter((f) => STRING_CODE.test(readFileSync(f, "utf8")))
    .map((f) => path.relative(PACKAGES, f));
  expect(offenders).toEqual([]);
});
