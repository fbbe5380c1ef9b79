/**
 * `hankweave-journal` entry point: the only place that prints errors and sets the exit code.
 * Expected failures (JournalError) print `error CODE: message` (+ hint), never a stack trace.
 */
import { isJournalError } from "@hankweave-journal/core";
import { COMMANDS, FLAG_ALIASES } from "./commands.js";
import type { CliIO } from "./io.js";
import { startProgress } from "./progress.js";
import { escapeTerminal } from "./terminal-text.js";
import { stdoutFailure } from "./stdout-failure.js";
import { resolve as resolvePath } from "node:path";

export const USAGE_TEXT = (): string =>
  [
    "usage: hankweave-journal <command> [options] <exec>",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`),
    "",
    "Run `hankweave-journal <command> --help` for a command's options.",
    "Exit codes: 0 ok, 1 findings or failure, 2 usage.",
  ].join("\n") + "\n";

/** Run the CLI with `argv` (without node and script). Returns the exit code; never throws. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    if (first === undefined) {
      io.stderr(`error USAGE: no command given\n\n${USAGE_TEXT()}`);
      return 2;
    }
    await io.stdout(USAGE_TEXT());
    return 0;
  }
  const name = FLAG_ALIASES[first] ?? first;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr(`error USAGE: unknown command ${JSON.stringify(first)}\n\n${USAGE_TEXT()}`);
    return 2;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    await io.stdout(command.help.endsWith("\n") ? command.help : command.help + "\n");
    return 0;
  }
  let stopProgress = (): void => undefined;
  try {
    const args = command.parseArgs(rest);
    const exec = rest.find((a) => !a.startsWith("-"));
    stopProgress = startProgress(io, command.name, exec === undefined ? undefined : resolvePath(io.cwd, exec));
    return await command.run(args, io);
  } catch (e) {
    if (isJournalError(e)) {
      if (e.code === "USAGE") {
        io.stderr(`error USAGE: ${e.message}\n\n${command.help}\n`);
        return 2;
      }
      const json = rest.includes("--json") || rest.includes("--jsonl");
      if (json) {
        await io.stdout(JSON.stringify({ ok: false, error: e.toJSON() }) + "\n");
      }
      io.stderr(`error ${e.code}: ${escapeTerminal(e.message)}\n${e.hint ? `hint: ${escapeTerminal(e.hint)}\n` : ""}`);
      return 1;
    }
    const err = e as Error;
    io.stderr(`internal error: ${err?.stack ?? String(e)}\n`);
    return 1;
  } finally {
    stopProgress();
  }
}

/**
 * The CliIO of this process: stdout with backpressure (huge `cat` output streams in bounded
 * memory), EPIPE on stdout as a quiet success (exit 0), SIGINT aborts `signal`.
 */
export function processIO(): CliIO {
  const controller = new AbortController();
  let epipe = false;
  const failure = stdoutFailure(process.stdout, controller);
  process.stdout.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code === "EPIPE") {
      epipe = true;
      controller.abort();
      process.exit(0);
    }
  });
  process.on("SIGINT", () => controller.abort());
  return {
    stdout: (chunk) =>
      new Promise<void>((resolve, reject) => {
        if (epipe) return resolve();
        if (failure.error) return reject(failure.error);
        if (process.stdout.write(chunk)) resolve();
        else failure.waitDrain(resolve, reject);
      }),
    stderr: (chunk) => {
      process.stderr.write(chunk);
    },
    stderrIsTTY: Boolean(process.stderr.isTTY),
    noColor: Boolean(process.env.NO_COLOR) || !process.stderr.isTTY,
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
}

/** Process entry: run the CLI with this process's argv and streams, set the exit code. */
export async function main(): Promise<void> {
  const io = processIO();
  let code = await runCli(process.argv.slice(2), io);
  // A stdout error other than EPIPE (a full device) may surface after the last write resolved.
  const late = await stdoutFailure(process.stdout).settled();
  if (late && code === 0) {
    io.stderr(`error ${late.code}: ${late.message}\n`);
    code = 1;
  }
  process.exitCode = code;
}
