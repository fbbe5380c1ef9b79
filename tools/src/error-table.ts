/**
 * Prints the README's table of stable error codes from `ERROR_CODES` (the single source of truth).
 * Usage: `node --import tsx tools/src/error-table.ts` (the lead pastes it between the README's
 * `<!-- error-codes -->` markers; `readme.test.ts` fails when the README misses a code).
 */
import { ERROR_CODES } from "@hankweave-journal/core";

/** The markdown table of every error code and its meaning. */
export function errorTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${meaning} |`);
  return ["| code | meaning |", "| --- | --- |", ...rows].join("\n") + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(errorTable());
}
