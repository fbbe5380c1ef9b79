// One ES module from a TypeScript entry with esbuild: the bench's runner children (tools/src/bench/
// measure.ts) run bundled so they measure our code and not the tsx loader. Not part of the product:
// the installed CLI runs the JavaScript that tools/build.mjs emits to packages/hankweave-journal/dist.
import { mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGES_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "packages");

/** Native or asset-loading dependencies stay outside the bundle (resolved from node_modules). */
const EXTERNAL = ["better-sqlite3", "@mongodb-js/zstd", "zstd-napi", "@duckdb/node-api", "esbuild", "tsx"];

/** Build the bundle of `entry` into `outfile` (temp file + rename). Throws when esbuild fails. */
export async function buildBundle(entry, outfile) {
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


/**
 * Every worker module of the workspace packages (`*.worker.ts`, and `*-worker.ts` as the extended
 * diet names its own, under each src/, test folders aside). A non-worker module matched by the
 * second pattern is only bundled beside, never run.
 */
export function workerModules(packagesDir = PACKAGES_DIR) {
  const out = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist" || entry.name === "testing") continue;
      const full = join(dir, entry.name);
      if (entry.isDirectory()) visit(full);
      else if (entry.name.endsWith(".worker.ts") || entry.name.endsWith("-worker.ts")) out.push(full);
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
        minify: true, // a worker pulls the package barrels it imports (zod, the schemas): ~0.8 MB each unminified
        banner: { js: "import { createRequire as __hwCreateRequire } from 'node:module'; const require = __hwCreateRequire(import.meta.url);" },
      });
      renameSync(tmp, outfile);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
  }
}
