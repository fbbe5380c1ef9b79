/**
 * Prints the README's table of stable codes from `ERROR_CODES` (the single table of codes and
 * meanings), with the severity of the codes that audit/index/verify report as findings
 * (`FINDING_SEVERITY`, which may only name codes of ERROR_CODES).
 * Usage: `node tools/assemble-readme.mjs` pastes it between the README's `<!-- error-codes -->`
 * markers; `readme.test.ts` fails when the README's table is not current.
 */
import { ERROR_CODES } from "@hankweave-journal/core";
import { FINDING_SEVERITY } from "@hankweave-journal/audit";

/** The markdown table of every code, its finding severity (– when it is only an error) and its meaning. */
export function errorTable(): string {
  const severity = FINDING_SEVERITY as Partial<Record<string, string>>;
  const rows = Object.entries(ERROR_CODES).map(([code, meaning]) => `| \`${code}\` | ${severity[code] ?? "–"} | ${meaning} |`);
  return ["| code | finding severity | meaning |", "| --- | --- | --- |", ...rows].join("\n") + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(errorTable());
}
