/**
 * Dependencies through their public API only, and no dependency declared for nothing: every deep
 * import (`pkg/sub`) of the sources is a subpath the package exports (or, for a package without an
 * `exports` map, one its documentation names); every runtime dependency of the published package
 * is imported by some source file.
 */
import * as fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
/** Deep imports of packages without an `exports` map, with where their documentation names them. */
const DOCUMENTED_SUBPATHS: Record<string, string> = {
  "zstd-napi/binding.js": "zstd-napi's README and typedoc: the `binding` module, low-level bindings to libzstd",
};

function sources(): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const visit = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) visit(full);
      else if (/\.(ts|mts|mjs|js)$/.test(e.name) && !/\.test\.ts$/.test(e.name)) out.push({ file: full, text: fs.readFileSync(full, "utf8") });
    }
  };
  for (const pkg of fs.readdirSync(path.join(REPO, "packages"))) {
    const src = path.join(REPO, "packages", pkg, "src");
    if (fs.existsSync(src)) visit(src);
  }
  return out;
}

/** Module specifiers in import/export-from/import()/require()/resolve() calls and nativeModule(…, "id", …). */
function specifiers(text: string): string[] {
  const re = /(?:from\s+|import\s*\(\s*|require\s*\(\s*|resolve\s*\(\s*|resolveOr\s*\(\s*|import\.meta\.url\)\s*,\s*)["']([^"'.][^"']*)["']/g;
  return [...text.matchAll(re)].map((m) => m[1]!).filter((s) => !s.startsWith("node:") && !s.startsWith("@hankweave-journal/") && s !== "hankweave-journal");
}

function split(spec: string): { pkg: string; sub: string | null } {
  const parts = spec.split("/");
  const n = spec.startsWith("@") ? 2 : 1;
  return { pkg: parts.slice(0, n).join("/"), sub: parts.length > n ? parts.slice(n).join("/") : null };
}

describe("dependencies", () => {
  const all = sources().flatMap(({ file, text }) => specifiers(text).map((spec) => ({ file: path.relative(REPO, file), spec })));

  it("are imported through entry points they export or document, never a private file", () => {
    const offending: string[] = [];
    for (const { file, spec } of all) {
      const { pkg, sub } = split(spec);
      if (sub === null) continue;
      const manifest = JSON.parse(fs.readFileSync(path.join(REPO, "node_modules", pkg, "package.json"), "utf8"));
      const exported = manifest.exports && typeof manifest.exports === "object" && Object.keys(manifest.exports).includes(`./${sub}`);
      if (!exported && DOCUMENTED_SUBPATHS[spec] === undefined) offending.push(`${file}: ${spec}`);
    }
    expect(offending).toEqual([]);
  });

  it("of the published package are each used by some source file", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO, "packages/hankweave-journal/package.json"), "utf8"));
    const used = new Set(all.map(({ spec }) => split(spec).pkg));
    const typeOnly = Object.keys(manifest.dependencies).filter((d) => d.startsWith("@types/"));
    const unused = Object.keys(manifest.dependencies).filter((d) => !typeOnly.includes(d) && !used.has(d));
    expect(unused).toEqual([]);
    for (const t of typeOnly) expect(used.has(t.slice("@types/".length))).toBe(true);
  });
});
