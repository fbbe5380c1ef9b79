#!/usr/bin/env node
// Regenerates the README's error-code table (between `<!-- error-codes:start -->` and
// `<!-- error-codes:end -->`) from ERROR_CODES, through tools/src/error-table.ts. The rest of the
// README is written by hand; tools/src/readme.test.ts fails when the table is not current.
// Usage: node tools/assemble-readme.mjs   (after adding a code to packages/core/src/errors.ts)
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const path = join(root, "README.md");
const readme = readFileSync(path, "utf8");
const table = execFileSync(process.execPath, ["--import", "tsx", join(root, "tools/src/error-table.ts")], { cwd: root, encoding: "utf8" });
const next = readme.replace(/<!-- error-codes:start -->[\s\S]*<!-- error-codes:end -->/, `<!-- error-codes:start -->\n${table}<!-- error-codes:end -->`);
if (next === readme) console.error("README: error table already current");
writeFileSync(path, next);
