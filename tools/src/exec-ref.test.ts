/**
 * The calling convention below the CLI (format §1, "The execution path enters once"): a function
 * that takes an execution names the parameter `exec` and types it `ExecRef` at a package's public
 * entry (exported from its index) or `ExecLayout` inside; never a bare path string. A source scan
 * with TypeScript's parser (no type checking, no build), over every package's production sources.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import type TypeScript from "typescript";
import { expect, it } from "vitest";

// require(), not import: Node's ESM loader scans the 9 MB CommonJS file for its exports (3.4 s
// against 0.55 s at load 11).
const ts = createRequire(import.meta.url)("typescript") as typeof TypeScript;
const PACKAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../packages");
/** Test support (helpers that make and remove temp directories), not library code. */
const TEST_DIRS = new Set(["testing", "test-support", "test-consumer"]);
/** The one function that makes a layout from a path (core/src/layout.ts). */
const LAYOUT_MAKER = "core/src/layout.ts layoutOf(exec: string)";
/** Parameter names that carry an execution directory. */
const EXEC_NAMES = new Set(["exec", "execRef", "execDir", "execPath"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return TEST_DIRS.has(e.name) ? [] : sources(p);
    return e.name.endsWith(".ts") && !/\.test\.ts$|\.d\.ts$|^test-helpers\.ts$/.test(e.name) ? [p] : [];
  });
}

interface ExecParam {
  file: string;
  fn: string;
  param: string;
  type: string;
}

/** Every function-like declaration's parameter named like an execution, with its type as written. */
function execParams(file: string, text: string): ExecParam[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: ExecParam[] = [];
  const visit = (node: TypeScript.Node): void => {
    if (ts.isFunctionLike(node) && "parameters" in node) {
      const name = (node as { name?: TypeScript.Node }).name;
      const fn = name && (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) ? name.text : ts.isConstructorDeclaration(node) ? "constructor" : "(anonymous)";
      for (const p of node.parameters) {
        if (ts.isIdentifier(p.name) && EXEC_NAMES.has(p.name.text)) {
          out.push({ file, fn, param: p.name.text, type: p.type ? p.type.getText(sf) : "(untyped)" });
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Names a package's index.ts exports from its own modules, with the module file they come from. */
function indexExports(pkgSrc: string): Map<string, string> {
  const index = path.join(pkgSrc, "index.ts");
  const sf = ts.createSourceFile(index, readFileSync(index, "utf8"), ts.ScriptTarget.Latest, true);
  const out = new Map<string, string>();
  for (const st of sf.statements) {
    if (!ts.isExportDeclaration(st) || st.isTypeOnly || !st.moduleSpecifier || !ts.isStringLiteral(st.moduleSpecifier)) continue;
    const spec = st.moduleSpecifier.text;
    if (!spec.startsWith(".")) continue;
    const file = path.resolve(pkgSrc, spec.replace(/\.js$/, ".ts"));
    if (st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const e of st.exportClause.elements) out.set((e.propertyName ?? e.name).text, file);
    }
  }
  return out;
}

const packages = readdirSync(PACKAGES).filter((p) => {
  try {
    return readdirSync(path.join(PACKAGES, p, "src")).includes("index.ts");
  } catch {
    return false;
  }
});
const all = packages.flatMap((p) => sources(path.join(PACKAGES, p, "src")).flatMap((f) => execParams(f, readFileSync(f, "utf8"))));
const rel = (x: ExecParam): string => `${path.relative(PACKAGES, x.file)} ${x.fn}(${x.param}: ${x.type})`;

it("no function takes an execution as a path string (ExecRef at the entry, ExecLayout inside)", () => {
  expect(all.length).toBeGreaterThan(40);
  expect(all.map(rel)).toContain(LAYOUT_MAKER);
  expect(all.filter((x) => x.type !== "ExecRef" && x.type !== "ExecLayout").map(rel).filter((r) => r !== LAYOUT_MAKER)).toEqual([]);
});

it("the functions a package index exports take an execution as ExecRef (a path or a layout)", () => {
  const exported = packages.flatMap((p) => {
    const names = indexExports(path.join(PACKAGES, p, "src"));
    return all.filter((x) => names.get(x.fn) === x.file);
  });
  expect(exported.length).toBeGreaterThan(30);
  expect(exported.filter((x) => x.type !== "ExecRef").map(rel).filter((r) => r !== LAYOUT_MAKER)).toEqual([]);
});
