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
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** Inside the repo's node_modules so the bundle's external (native) imports resolve from it. */
const BUNDLE_DIR = path.join(REPO, "node_modules/.cache/hankweave-crash-children");
/** Native modules stay external (they are loaded from node_modules at run time). */
const EXTERNAL = ["@mongodb-js/zstd", "@mongodb-js/zstd/*", "zstd-napi", "better-sqlite3"];

/**
 * Bundle the child entry `entry` (an absolute .ts path) to `<repo>/node_modules/.cache/…/<name>.mjs`
 * and return the bundle's path. Call once per test file (in `beforeAll`).
 */
export async function bundleCrashChild(entry: string, name: string): Promise<string> {
  const esbuild = (await import("esbuild")) as typeof import("esbuild");
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const outfile = path.join(BUNDLE_DIR, `${name}-${process.pid}.mjs`);
  await esbuild.build({
    entryPoints: [entry], bundle: true, platform: "node", format: "esm", target: "node20", outfile,
    external: EXTERNAL,
    // CommonJS dependencies inside the ESM bundle call require().
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: "error",
  });
  return outfile;
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
