/**
 * `hankweave-journal` entry point: the only place that prints errors and sets the exit code.
 * Expected failures (JournalError) print `error CODE: message` (+ hint), never a stack trace.
 */
import { isJournalError } from "@hankweave-journal/core";
import { COMMANDS, FLAG_ALIASES } from "./commands.js";
import { ReportedError, type CliIO, type Command } from "./io.js";
import { readMeasure, startProgress } from "./progress.js";
import { suggest } from "./suggest.js";
import { escapeTerminal } from "./terminal-text.js";
import { stdoutFailure } from "./stdout-failure.js";
import { execLayoutOf } from "./exec-path.js";
import { VERSION } from "./version.js";
import { errnoOf, ioError } from "@hankweave-journal/journal";

/** The path an OS error names (`path`, else `dest`), or a placeholder. */
function osErrorPath(e: unknown): string {
  const o = e as { path?: unknown; dest?: unknown };
  return typeof o.path === "string" ? o.path : typeof o.dest === "string" ? o.dest : "(unknown path)";
}

export const USAGE_TEXT = (): string =>
  [
    "usage: hankweave-journal <command> [options] <exec>",
    "",
    "commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(10)} ${c.summary}`),
    "",
    "Run `hankweave-journal help <command>` (or `<command> --help`) for a command's options,",
    "`hankweave-journal --version` for the version.",
    "Exit codes: 0 ok, 1 findings or failure, 2 usage.",
  ].join("\n") + "\n";

/**
 * The one-line usage error: what is wrong, and where to read more (never the whole help). Exit
 * code 2. With --json on the command line, stdout gets the error as one JSON object too.
 */
async function usageError(io: CliIO, message: string, command?: string, argv: string[] = []): Promise<number> {
  const see = command === undefined ? "hankweave-journal --help" : `hankweave-journal ${command} --help`;
  if (argv.includes("--json") || argv.includes("--jsonl")) {
    await io.stdout(JSON.stringify({ ok: false, error: { code: "USAGE", message } }) + "\n");
  }
  io.stderr(`error USAGE: ${escapeTerminal(message)}\nsee \`${see}\`\n`);
  return 2;
}

function findCommand(name: string): Command<any> | undefined {
  const canonical = FLAG_ALIASES[name] ?? name;
  return COMMANDS.find((c) => c.name === canonical);
}

function unknownCommand(io: CliIO, name: string): Promise<number> {
  const near = suggest(name, COMMANDS.map((c) => c.name));
  return usageError(io, `unknown command ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ""}`);
}

/** Run the CLI with `argv` (without node and script). Returns the exit code; never throws. */
export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr(`error USAGE: no command given\n\n${USAGE_TEXT()}`);
    return 2;
  }
  if (first === "--help" || first === "-h") {
    await io.stdout(USAGE_TEXT());
    return 0;
  }
  if (first === "help") {
    if (rest.length === 0) {
      await io.stdout(USAGE_TEXT());
      return 0;
    }
    const target = findCommand(rest[0]!);
    if (!target) return unknownCommand(io, rest[0]!);
    await io.stdout(target.help.endsWith("\n") ? target.help : target.help + "\n");
    return 0;
  }
  if (first === "--version" || first === "-V") {
    await io.stdout(`${VERSION}\n`);
    return 0;
  }
  const command = findCommand(first);
  if (!command) return unknownCommand(io, first);
  if (rest.includes("--help") || rest.includes("-h")) {
    await io.stdout(command.help.endsWith("\n") ? command.help : command.help + "\n");
    return 0;
  }
  let stopProgress = (): void => undefined;
  try {
    let args: unknown;
    try {
      args = command.parseArgs(rest);
    } catch (e) {
      if (isJournalError(e) && e.code === "USAGE") return await usageError(io, e.message, command.name, rest);
      throw e;
    }
    // The execution directory enters once: resolved against the injected cwd, passed down as a layout.
    const raw = (args as { exec?: unknown }).exec;
    const layout = typeof raw === "string" ? execLayoutOf(io, raw) : null;
    const measure = layout === null ? null : command.progress ? command.progress(args, layout) : readMeasure(layout);
    const progress = startProgress(io, command.name, measure);
    stopProgress = progress.stop;
    return await command.run(args, progress.io, { layout });
  } catch (caught) {
    stopProgress();
    // An OS error that no library wrapped (a full disk, a read-only mount, a directory where a
    // file goes) is still a coded error for the user (durable-file.ts's mapping), never a stack.
    const e = !isJournalError(caught) && errnoOf(caught) !== undefined ? ioError(caught, osErrorPath(caught)) : caught;
    if (e instanceof ReportedError) {
      io.stderr(`error ${e.error.code}: ${escapeTerminal(e.error.message)}\n${e.error.hint ? `hint: ${escapeTerminal(e.error.hint)}\n` : ""}`);
      return 1;
    }
    if (isJournalError(e)) {
      if (e.code === "USAGE") return await usageError(io, e.message, command.name, rest);
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
