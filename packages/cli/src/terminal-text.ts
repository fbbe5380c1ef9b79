/**
 * Human output of the CLI through the one terminal escaper (`escapeTerminal`,
 * `escapeTerminalText` in @hankweave-journal/core, re-exported here).
 */
import { escapeTerminalText } from "@hankweave-journal/core";
import type { CliIO } from "./io.js";

export { escapeTerminal, escapeTerminalText } from "@hankweave-journal/core";

/** The io of a human-output branch: stdout strings go through `escapeTerminalText` (bytes pass as they are). */
export function humanIO(io: CliIO): CliIO {
  return { ...io, stdout: (chunk) => io.stdout(typeof chunk === "string" ? escapeTerminalText(chunk) : chunk) };
}
