/**
 * The one helper for crash-test children (journal, state, diet, fault injection): bundle a child
 * entry once with esbuild (a bundled child starts in ~0.3–0.5 s where `node --import tsx` costs
 * ~1.4 s on this machine, which is what keeps 100+ real SIGKILLs inside a test's wall budget), then
 * spawn it and SIGKILL it at a chosen moment (children may also SIGKILL themselves from an injected
 * hook: `DietHook`, `StateEngineHook`).
 *
 * Not a test itself; imported by `*.int.test.ts` files only.
 */
import { spawn } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** Inside the repo's node_modules so the bundle's external (native) imports resolve from it. */
const BUNDLE_DIR = path.join(REPO, "node_modules/.cache/hankweave-crash-children");
/** Native modules stay external (they are loaded from node_modules at run time). */
const EXTERNAL = ["@mongodb-js/zstd", "@mongodb-js/zstd/*", "zstd-napi", "better-sqlite3", "@duckdb/node-api"];

/** Options of `bundleCrashChild`. */
export interface BundleOptions {
  /**
   * Worker modules (absolute .ts paths) the child starts with `startWorker(new URL("./x.js",
   * import.meta.url))`: each is bundled beside the child as `<basename>.js`, the child and its
   * workers in a folder of their own.
   */
  workers?: string[];
}

const BANNER = {
  // CommonJS dependencies inside the ESM bundle call require().
  js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
};

/**
 * Bundle the child entry `entry` (an absolute .ts path) to `<repo>/node_modules/.cache/…/<name>.mjs`
 * (with `workers`: `…/<name>-<pid>/child.mjs` and the workers beside it) and return the bundle's
 * path. Call once per test file (in `beforeAll`).
 */
export async function bundleCrashChild(entry: string, name: string, opts: BundleOptions = {}): Promise<string> {
  const esbuild = (await import("esbuild")) as typeof import("esbuild");
  const dir = opts.workers === undefined ? BUNDLE_DIR : path.join(BUNDLE_DIR, `${name}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const outfile = opts.workers === undefined ? path.join(dir, `${name}-${process.pid}.mjs`) : path.join(dir, "child.mjs");
  const common = { bundle: true, platform: "node", format: "esm", target: "node20", external: EXTERNAL, banner: BANNER, logLevel: "error" } as const;
  await Promise.all([
    esbuild.build({ ...common, entryPoints: [entry], outfile }),
    ...(opts.workers ?? []).map((w) => esbuild.build({ ...common, entryPoints: [w], outfile: path.join(dir, path.basename(w).replace(/\.ts$/, ".js")) })),
  ]);
  return outfile;
}

/**
 * Every worker module of the workspace packages (`*.worker.ts`, and `*-worker.ts` as the extended
 * diet names its own; `testing/` folders aside): what `tools/bundle.mjs` bundles beside the CLI.
 */
export function workspaceWorkers(): string[] {
  const out: string[] = [];
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name === "dist" || e.name === "testing") continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) visit(full);
      else if (e.name.endsWith(".worker.ts") || e.name.endsWith("-worker.ts")) out.push(full);
    }
  };
  const packages = path.join(REPO, "packages");
  for (const pkg of readdirSync(packages, { withFileTypes: true })) {
    if (pkg.isDirectory()) {
      try {
        visit(path.join(packages, pkg.name, "src"));
      } catch {
        // a package without src/ has no workers
      }
    }
  }
  return out;
}

/**
 * The CLI of the sources as one bundled child (`node <bundle> <command> …`, every worker module
 * beside it): the same code as `packages/cli/bin/hankweave-journal.js`, which compiles the sources
 * with tsx on every start (~1.4 CPU s, and ~0.9 CPU s more per worker thread started from a `.ts`);
 * the bundle starts in a fraction of that. Built from the current sources, once per test file
 * (in `beforeAll`).
 */
export function bundleCli(): Promise<string> {
  return bundleCrashChild(path.join(REPO, "packages/cli/src/testing/cli-child.ts"), "cli", { workers: workspaceWorkers() });
}

/** The line a child prints once it is open: `ready`, optionally followed by a space and details. */
const READY_LINE = /(^|\n)ready( [^\n]*)?\n/;

/** When the parent kills the child. */
export interface KillPlan {
  /** SIGKILL this many ms after the spawn (also when "ready" never came). */
  afterSpawnMs?: number;
  /** SIGKILL this many ms after the child printed its `ready` line on stdout. */
  afterReadyMs?: number;
  /** Extra environment variables for the child (the parent's are inherited). */
  env?: Record<string, string>;
}

/** How a crash child ended. */
export interface CrashRun {
  /** True when the child died of SIGKILL (by the parent or by itself). */
  killed: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
  /** True when the `ready` line was printed before the end. */
  ready: boolean;
}

/** Spawn `node <bundle> ...args` and SIGKILL it as `plan` says; resolves when it has exited. */
export function runCrashChild(bundle: string, args: string[], plan: KillPlan = {}): Promise<CrashRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], {
      env: { ...process.env, ...plan.env }, stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let ready = false;
    const timers: NodeJS.Timeout[] = [];
    const kill = (): void => {
      child.kill("SIGKILL");
    };
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => {
      stdout += d;
      if (!ready && READY_LINE.test(stdout)) {
        ready = true;
        if (plan.afterReadyMs !== undefined) timers.push(setTimeout(kill, plan.afterReadyMs));
      }
    });
    child.stderr.on("data", (d: string) => (stderr += d));
    if (plan.afterSpawnMs !== undefined) timers.push(setTimeout(kill, plan.afterSpawnMs));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      for (const t of timers) clearTimeout(t);
      resolve({ killed: signal === "SIGKILL", code, stdout, stderr, ready });
    });
  });
}
