// The CLI as one prebuilt ES module, so a command starts in ~0.1 s instead of compiling the
// TypeScript sources through tsx on every call (0.5–1.5 s). Plain JS on purpose: it runs before
// any TypeScript loader exists.
//
// The bundle lives at packages/cli/dist/hankweave-journal.mjs (gitignored). It is fresh when it is
// newer than every source file of the workspace packages; a missing or stale bundle is rebuilt
// with esbuild (tsx's own transformer, ~0.3 s) through a temp file and an atomic rename, so
// concurrent calls never see half a bundle. When it cannot be built (read-only install, esbuild
// missing), the caller falls back to tsx: same code, slower start.
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
const PACKAGES_DIR = dirname(CLI_DIR);
export const BUNDLE_PATH = join(CLI_DIR, "dist", "hankweave-journal.mjs");

/** Native or asset-loading dependencies stay outside the bundle (resolved from node_modules). */
const EXTERNAL = ["better-sqlite3", "@mongodb-js/zstd", "zstd-napi", "esbuild", "tsx"];

/** Newest modification time (ms) of any source or manifest file of the workspace packages. */
export function newestSourceMtime(packagesDir = PACKAGES_DIR) {
  let newest = 0;
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (/\.(ts|mts|js|mjs|json)$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  for (const pkg of readdirSync(packagesDir, { withFileTypes: true })) {
    if (!pkg.isDirectory()) continue;
    const src = join(packagesDir, pkg.name, "src");
    try {
      visit(src);
      newest = Math.max(newest, statSync(join(packagesDir, pkg.name, "package.json")).mtimeMs);
    } catch {
      // a package without src/ or package.json has nothing to bundle
    }
  }
  return newest;
}

/** Build the bundle of `entry` into `outfile` (temp file + rename). Throws when esbuild fails. */
export async function buildBundle(entry = join(CLI_DIR, "src", "main.ts"), outfile = BUNDLE_PATH) {
  const { build } = await import("esbuild");
  mkdirSync(dirname(outfile), { recursive: true });
  const tmp = `${outfile}.tmp-${process.pid}`;
  try {
    await build({
      entryPoints: [entry],
      outfile: tmp,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      external: EXTERNAL,
      logLevel: "silent",
      // Bundled CommonJS dependencies (zod is ESM, fast-json-stable-stringify is CJS) need `require`.
      banner: { js: "import { createRequire as __hwCreateRequire } from 'node:module'; const require = __hwCreateRequire(import.meta.url);" },
    });
    await buildWorkerBundles(build, dirname(outfile));
    renameSync(tmp, outfile);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return outfile;
}

/** Every worker module of the workspace packages (`*.worker.ts` under each src/, test folders aside). */
export function workerModules(packagesDir = PACKAGES_DIR) {
  const out = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name === "testing") continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith(".worker.ts")) out.push(full);
    }
  };
  for (const pkg of readdirSync(packagesDir, { withFileTypes: true })) {
    if (pkg.isDirectory()) {
      try {
        visit(join(packagesDir, pkg.name, "src"));
      } catch {
        // a package without src/ has no workers
      }
    }
  }
  return out;
}

/**
 * Worker modules beside a bundle: code bundled from `x.ts` starts its worker with
 * `new URL("./y.worker.js", import.meta.url)` (see startWorker in @hankweave-journal/cas), which
 * inside a bundle is the bundle's own folder; so each `y.worker.ts` is bundled to `<dir>/y.worker.js`
 * (worker names are unique across packages).
 */
async function buildWorkerBundles(build, dir) {
  for (const src of workerModules()) {
    const outfile = join(dir, src.split(/[\\/]/).pop().replace(/\.ts$/, ".js"));
    const tmp = `${outfile}.tmp-${process.pid}`;
    try {
      await build({
        entryPoints: [src], outfile: tmp, bundle: true, platform: "node", format: "esm", target: "node20", external: EXTERNAL, logLevel: "silent",
        banner: { js: "import { createRequire as __hwCreateRequire } from 'node:module'; const require = __hwCreateRequire(import.meta.url);" },
      });
      renameSync(tmp, outfile);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }
}

/**
 * The path of a fresh bundle, building it when missing or older than the sources; null when it
 * cannot be built (the caller then runs the sources through tsx).
 */
export async function ensureBundle({ bundlePath = BUNDLE_PATH, packagesDir = PACKAGES_DIR, entry } = {}) {
  if (process.env.HANKWEAVE_NO_BUNDLE === "1") return null;
  let bundleTime = -1;
  try {
    bundleTime = statSync(bundlePath).mtimeMs;
  } catch {
    // missing: build it
  }
  const newest = newestSourceMtime(packagesDir);
  if (bundleTime >= 0 && bundleTime >= newest) return bundlePath;
  try {
    await buildBundle(entry, bundlePath);
    // A source stamped in the future (clock skew, an extracted archive) must not make every call rebuild.
    if (statSync(bundlePath).mtimeMs < newest) utimesSync(bundlePath, new Date(), new Date(Math.ceil(newest) + 1)); // Date has ms precision
    return bundlePath;
  } catch {
    return null;
  }
}
