/**
 * Running one measured child process: wall time from the parent, peak RSS from `/usr/bin/time`
 * ("Maximum resident set size", which for a shell pipeline is the largest process of it), and the
 * runner's in-child operation time when the child is our runner.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import type { RunnerResult, RunnerSpec } from "./runner.js";

/** The repository root (cwd of every child, so `--import tsx` resolves). */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const RUNNER = fileURLToPath(new URL("./runner.ts", import.meta.url));
/** The runner as one prebuilt ES module (gitignored), built by `prepareRunner`. */
const RUNNER_BUNDLE = fileURLToPath(new URL("../../dist/bench-runner.mjs", import.meta.url));
/**
 * The CLI as users run it (`packages/cli/src/main.ts` bundled, the same `buildBundle` as the
 * installed bin's `dist/bundle/cli.js`) and a bin beside it that is the installed bin's two lines:
 * the whole-process rows start it as a process of its own, node start-up and module loading included.
 */
const CLI_BUNDLE = fileURLToPath(new URL("../../dist/bench-cli/cli.js", import.meta.url));
const CLI_BIN = fileURLToPath(new URL("../../dist/bench-cli/hankweave-journal.mjs", import.meta.url));
const CLI_ENTRY = fileURLToPath(new URL("../../../packages/cli/src/main.ts", import.meta.url));
const TIME_BIN = "/usr/bin/time";
const TIME_MARK = "__BENCH_TIME__";

/** One measured execution. */
export interface Measured {
  /** Parent-side wall time of the whole child (start-up included). */
  wallMs: number;
  /** The operation's own time: in-child for our runner, else the wall time. */
  opMs: number;
  /** Peak RSS in KB, or null when /usr/bin/time is unavailable. */
  rssKB: number | null;
  exit: number;
  detail: Record<string, unknown> | undefined;
  stderr: string;
}

/** What a contender runs: our runner with a spec, or a shell command line. */
export type Command = { runner: RunnerSpec; stdinFrom?: string } | { shell: string };

/** Which external tools exist. */
export interface Toolbox {
  time: boolean;
  zstd: boolean;
  jq: boolean;
  wc: boolean;
  awk: boolean;
}

function which(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

/**
 * Find the external tools; when some are missing and we are root with apt-get, install them
 * (`time`, `zstd`, `jq`). Returns what is available and a list of messages for what is not.
 */
export function ensureTools(install: boolean, log: (s: string) => void): { tools: Toolbox; missing: string[] } {
  const probe = (): Toolbox => ({ time: existsSync(TIME_BIN), zstd: which("zstd"), jq: which("jq"), wc: which("wc"), awk: which("awk") });
  let tools = probe();
  const want = [!tools.time && "time", !tools.zstd && "zstd", !tools.jq && "jq"].filter((x): x is string => typeof x === "string");
  if (want.length > 0 && install && process.getuid?.() === 0 && which("apt-get")) {
    log(`installing ${want.join(", ")} with apt-get…`);
    spawnSync("sh", ["-c", `apt-get install -y ${want.join(" ")} >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y ${want.join(" ")} >/dev/null 2>&1)`], { stdio: "ignore" });
    tools = probe();
  }
  const missing: string[] = [];
  if (!tools.time) missing.push("/usr/bin/time (peak RSS not measured): apt-get install time");
  if (!tools.zstd) missing.push("zstd (zstd baselines skipped): apt-get install zstd");
  if (!tools.jq) missing.push("jq (jq baselines skipped): apt-get install jq");
  return { tools, missing };
}

/** How runner children start: the bundle once `prepareRunner` built it, else the sources through tsx. */
let runnerCommand: string[] = ["node", "--import", "tsx", RUNNER];
/** The whole-process CLI (`node <bin>`), once `prepareRunner` built it; null under tsx. */
let cliCommand: string[] | null = null;

/**
 * Build the runner (and through it our packages) into one ES module with esbuild (tools/bundle.mjs),
 * so children measure the code users run and not the tsx
 * loader: tsx compiles modules on load and leaves its own heap for V8 to collect, which a 20 ms
 * operation (line N) then pays inside its timed window. Falls back to tsx when the build fails.
 * Returns "bundle" or "tsx".
 */
export async function prepareRunner(log: (s: string) => void, opts: { forceTsx?: boolean } = {}): Promise<"bundle" | "tsx"> {
  runnerCommand = ["node", "--import", "tsx", RUNNER];
  cliCommand = null;
  if (opts.forceTsx || process.env.HANKWEAVE_NO_BUNDLE === "1") return "tsx";
  try {
    const bundler = (await import(new URL("../../bundle.mjs", import.meta.url).href)) as {
      buildBundle(entry: string, outfile: string): Promise<string>;
    };
    await bundler.buildBundle(RUNNER, RUNNER_BUNDLE);
    runnerCommand = ["node", RUNNER_BUNDLE];
    try {
      await bundler.buildBundle(CLI_ENTRY, CLI_BUNDLE);
      writeFileSync(CLI_BIN, 'import { main } from "./cli.js";\nawait main();\n');
      cliCommand = ["node", CLI_BIN];
    } catch (e) {
      log(`bench: CLI bundle failed (${(e as Error).message.split("\n")[0]}); the whole-process rows are n/a`);
    }
    return "bundle";
  } catch (e) {
    log(`bench runner: bundle failed (${(e as Error).message.split("\n")[0]}); children run through tsx`);
    return "tsx";
  }
}

/**
 * The command line of the CLI as a process of its own (the installed bin's code, bundled), or null
 * when it was not built (children through tsx): the whole-process rows are then n/a.
 */
export function wholeProcessCli(): string[] | null {
  return cliCommand ? [...cliCommand] : null;
}

/** The command line that starts a runner child (for shell contenders that loop over it, fleet.ts). */
export function runnerArgv(): string[] {
  return [...runnerCommand];
}

/**
 * Flush the dirty pages the previous commands left (untimed), so every contender starts with the
 * same writeback state. Without it a command that writes 1 GB (restore, `zstd -d`) left the kernel
 * writing back while the next contender ran, which then paid for it: `zstd -d` at 1 GB took
 * 1.2 s after a sync and 2.2–3.5 s in the bench rounds that followed a restore.
 */
export function settleWriteback(): void {
  spawnSync("sync", [], { stdio: "ignore", timeout: 120_000 });
}

/** Run `cmd` once, measured (after `settleWriteback`). Never throws for a failing child (exit code reported). */
export function measure(cmd: Command, tools: Toolbox, timeoutMs: number): Measured {
  const base: string[] = "runner" in cmd
    ? [...runnerCommand, JSON.stringify(cmd.runner)]
    : ["sh", "-c", cmd.shell];
  const argv = tools.time ? [TIME_BIN, "-f", `${TIME_MARK} %M`, ...base] : base;
  const input = "runner" in cmd && cmd.stdinFrom ? readFileSync(cmd.stdinFrom) : undefined;
  settleWriteback();
  const t = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), {
    cwd: REPO_ROOT, input, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, encoding: "utf8",
    stdio: [input ? "pipe" : "ignore", "pipe", "pipe"],
  });
  const wallMs = performance.now() - t;
  const stderr = r.stderr ?? "";
  let rssKB: number | null = null;
  const m = new RegExp(`${TIME_MARK} (\\d+)`).exec(stderr);
  if (m) rssKB = Number(m[1]);
  let exit = r.status ?? (r.signal ? 128 : 1);
  let opMs = wallMs;
  let detail: Record<string, unknown> | undefined;
  if ("runner" in cmd) {
    const last = (r.stdout ?? "").trim().split("\n").pop() ?? "";
    try {
      const res = JSON.parse(last) as RunnerResult;
      opMs = res.ms;
      exit = exit === 0 ? res.exit : exit;
      detail = res.detail;
    } catch {
      exit = exit === 0 ? 98 : exit;
    }
  }
  return { wallMs, opMs, rssKB, exit, detail, stderr: stderr.replace(new RegExp(`${TIME_MARK}.*`, "g"), "").slice(-800) };
}

/** The machine the bench ran on. */
export function machineInfo(): Record<string, unknown> {
  const cpu = (() => {
    try {
      const m = /model name\s*:\s*(.+)/.exec(readFileSync("/proc/cpuinfo", "utf8"));
      return m ? m[1].trim() : cpus()[0]?.model ?? "unknown";
    } catch {
      return cpus()[0]?.model ?? "unknown";
    }
  })();
  const cmdOut = (c: string): string => {
    try {
      return execFileSync("sh", ["-c", c], { encoding: "utf8" }).trim();
    } catch {
      return "unknown";
    }
  };
  return {
    cpu,
    nproc: Number(cmdOut("nproc")) || cpus().length,
    memTotalGB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    freeH: cmdOut("free -h | head -2"),
    node: process.version,
    zstd: cmdOut("zstd --version 2>/dev/null | head -1"),
    jq: cmdOut("jq --version 2>/dev/null"),
    loadAvg: cmdOut("cat /proc/loadavg"),
  };
}
