#!/usr/bin/env node
// The build of the publishable package `hankweave-journal` (packages/hankweave-journal): tsc emits
// JavaScript and .d.ts of every workspace package's non-test sources (tsconfig.build.json), then
// each package's `src/` is copied to `dist/<package>/` (the public package's own `src/` to
// `dist/`) with every `@hankweave-journal/<package>` import rewritten to a relative path. The
// workspace packages are not on the registry: they travel inside this one package's dist/. File
// layout inside a package is kept, so `new URL("./x.js", import.meta.url)` finds its sibling.
// The command itself runs from one esbuild bundle of the CLI, `dist/bundle/cli.js` (its worker
// modules bundled beside it), built here and never at run time: one file loads in about half the
// CPU time of the ~120 modules of dist/ (0.2 s against 0.4 s for --help, measured); the library
// entry points stay the tsc output with its .d.ts.
// Run by `npm run build`, the root `prepare` (so `npm ci` builds) and the package's `prepack`.
// Usage: node tools/build.mjs
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkgDir = join(root, "packages", "hankweave-journal");
const tscOut = join(pkgDir, ".tsc-out");
const dist = join(pkgDir, "dist");
const PUBLIC = "hankweave-journal";

/** Every file under `dir` (relative paths). */
function walk(dir, base = dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    if (e.isDirectory()) walk(full, base, out);
    else out.push(relative(base, full));
  }
  return out;
}

/** Where the emitted file `rel` (`<pkg>/src/<path>`) goes in dist/. */
function target(rel) {
  const [pkg, src, ...rest] = rel.split(sep);
  if (src !== "src") throw new Error(`build: unexpected emitted file ${rel}`);
  return pkg === PUBLIC ? join(dist, ...rest) : join(dist, pkg, ...rest);
}

/** `text` of the file at `file` with `@hankweave-journal/<pkg>` specifiers made relative. */
export function rewriteSpecifiers(text, file, distDir = dist) {
  return text.replace(/(["'])@hankweave-journal\/([a-z-]+)(\/[A-Za-z0-9_./-]+)?\1/g, (m, q, pkg, sub) => {
    if (sub !== undefined) throw new Error(`build: ${relative(distDir, file)} imports ${m}: only package roots ship`);
    if (!existsSync(join(distDir, pkg)) && !existsSync(join(tscOut, pkg))) throw new Error(`build: unknown package in ${m}`);
    let spec = relative(dirname(file), join(distDir, pkg, "index.js")).split(sep).join("/");
    if (!spec.startsWith(".")) spec = `./${spec}`;
    return `${q}${spec}${q}`;
  });
}

async function build() {
  const started = Date.now();
  rmSync(tscOut, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const r = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    rmSync(tscOut, { recursive: true, force: true });
    console.error("build: tsc failed");
    process.exit(1);
  }
  const tmp = `${dist}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  let files = 0;
  for (const rel of walk(tscOut)) {
    const to = join(tmp, relative(dist, target(rel)));
    mkdirSync(dirname(to), { recursive: true });
    let text = readFileSync(join(tscOut, rel), "utf8");
    if (/\.(js|d\.ts)$/.test(rel)) text = rewriteSpecifiers(text, join(dist, relative(tmp, to)));
    writeFileSync(to, text);
    files++;
  }
  rmSync(tscOut, { recursive: true, force: true });
  // The package's README is the repo's (gitignored copy, so npm shows the manual).
  writeFileSync(join(pkgDir, "README.md"), readFileSync(join(root, "README.md")));
  const { buildBundle } = await import("./bundle.mjs");
  await buildBundle(join(root, "packages/cli/src/main.ts"), join(tmp, "bundle", "cli.js"));
  rmSync(dist, { recursive: true, force: true });
  renameSync(tmp, dist);
  console.error(`build: ${files} files in ${relative(root, dist)} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

if (import.meta.url === `file://${process.argv[1]}`) await build();
