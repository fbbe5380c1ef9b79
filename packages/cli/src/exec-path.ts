/**
 * The CLI's one way in for the paths a user types (format §1, "The execution path enters
 * once"): `<exec>`, `--all <root>`, `fleet ls <root>`, `fleet query <dir>` and `export <root>` are
 * resolved here against the injected `io.cwd` (never `process.cwd()`). `runCli` turns a command's
 * `<exec>` into its ExecLayout once and passes it down as `ctx.layout`; commands hand that layout
 * to the libraries (which take an `ExecRef`) and never resolve the argument again.
 */
import { resolve } from "node:path";
import { layoutOf, type ExecLayout } from "@hankweave-journal/core";
import type { CliIO, RunContext } from "./io.js";

/** `arg` as an absolute path, resolved against the injected cwd. */
export function cliPath(io: Pick<CliIO, "cwd">, arg: string): string {
  return resolve(io.cwd, arg);
}

/** The layout of an `<exec>` argument (what `runCli` puts in `ctx.layout`). */
export function execLayoutOf(io: Pick<CliIO, "cwd">, arg: string): ExecLayout {
  return layoutOf(cliPath(io, arg));
}

/** The layout of the `<exec>` of a command that requires one (its parseArgs refused none). */
export function execLayout(ctx: RunContext): ExecLayout {
  if (ctx.layout === null) throw new Error("a command that takes <exec> ran without one (its parseArgs must require it)");
  return ctx.layout;
}
