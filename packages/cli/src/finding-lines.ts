/**
 * The stderr lines a command prints when findings make it exit 1, so every non-zero exit names a
 * stable code (`error CODE: line N: message`), in human and JSON mode alike.
 *
 * Guarantees: one line per error finding up to `MAX_FINDING_LINES`, then one line counting the
 * rest; the message goes through `escapeTerminal` (it may quote journal bytes). Prints nothing
 * when there is no error finding.
 */
import type { Finding } from "@hankweave-journal/core";
import { escapeTerminal } from "./terminal-text.js";
import type { CliIO } from "./io.js";

/** At most this many error findings are printed one per line. */
export const MAX_FINDING_LINES = 20;

/** One `severity CODE: line N: message` line. */
export function findingLine(f: Finding): string {
  const where = f.line !== undefined && !f.message.startsWith(`line ${f.line}`) ? `line ${f.line}: ` : "";
  return `${f.severity === "error" ? "error" : f.severity} ${f.code}: ${escapeTerminal(where + f.message)}\n`;
}

/** Print the error findings to stderr (see the module doc); returns how many there were. */
export function printErrorFindings(io: CliIO, findings: readonly Finding[]): number {
  const errors = findings.filter((f) => f.severity === "error");
  for (const f of errors.slice(0, MAX_FINDING_LINES)) io.stderr(findingLine(f));
  if (errors.length > MAX_FINDING_LINES) io.stderr(`error ${errors[MAX_FINDING_LINES].code}: … and ${errors.length - MAX_FINDING_LINES} more error findings\n`);
  return errors.length;
}
