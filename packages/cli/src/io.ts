/**
 * The injected I/O of a CLI command: tests pass buffers, `main` passes the process streams.
 * Data goes to `stdout`, diagnostics and progress to `stderr`; progress only when `stderrIsTTY`.
 */
import type { ExecLayout, JournalError } from "@hankweave-journal/core";

export interface CliIO {
  stdout: (chunk: string | Uint8Array) => void | Promise<void>;
  stderr: (chunk: string) => void;
  stderrIsTTY: boolean;
  /** `NO_COLOR` set (or not a TTY): never emit ANSI colours. */
  noColor: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Aborted on SIGINT / EPIPE: long commands stop early and quietly. */
  signal: AbortSignal;
}

/** What the CLI resolved before running a command: the execution directory, once, against `io.cwd`. */
export interface RunContext {
  /** The layout of the `<exec>` argument (resolved against `io.cwd`); null for commands without one. */
  layout: ExecLayout | null;
}

/** What a command's progress line counts: bytes this process read or wrote, against a total (null: unknown). */
export interface ProgressMeasure {
  counter: "read" | "written";
  total: number | null;
}

/** One CLI command: a pure argument parser and a runner. Exit codes: 0 ok, 1 findings/failure, 2 usage. */
export interface Command<A = unknown> {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** Full `--help` text. */
  help: string;
  /** Throws JournalError("USAGE") on bad arguments. Pure. */
  parseArgs(argv: string[]): A;
  /**
   * Returns the exit code. Throws JournalError for expected failures (main maps them). A command
   * with an `<exec>` works on `ctx.layout` (exec-path.ts's `execLayout(ctx)`), never on `args.exec`
   * (the argument as typed, relative to `io.cwd`).
   */
  run(args: A, io: CliIO, ctx: RunContext): Promise<number>;
  /** What the progress line measures; default: bytes read against the journal's size (plain, else dieted). */
  progress?(args: A, layout: ExecLayout): ProgressMeasure | null;
}

/**
 * A JournalError a command already reported on stdout (inside its --json output): `main` prints
 * the `error CODE:` line on stderr and exits 1, but writes no second JSON value.
 */
export class ReportedError extends Error {
  constructor(readonly error: JournalError) {
    super(error.message);
  }
}

/** An in-memory CliIO for tests: returns the io plus accessors for what was written. */
export function memoryIO(overrides: Partial<CliIO> = {}): CliIO & { out(): string; outBytes(): Buffer; err(): string } {
  const outChunks: Buffer[] = [];
  const errChunks: string[] = [];
  const io: CliIO = {
    stdout: (c) => {
      outChunks.push(typeof c === "string" ? Buffer.from(c, "utf8") : Buffer.from(c));
    },
    stderr: (c) => {
      errChunks.push(c);
    },
    stderrIsTTY: false,
    noColor: true,
    env: {},
    cwd: process.cwd(),
    signal: new AbortController().signal,
    ...overrides,
  };
  return Object.assign(io, {
    out: () => Buffer.concat(outChunks).toString("utf8"),
    outBytes: () => Buffer.concat(outChunks),
    err: () => errChunks.join(""),
  });
}
