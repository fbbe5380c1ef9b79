/**
 * `node --import tsx tools/src/generate.ts <out-exec> [--size 100MB | --events N] [--seed 1]
 * [--profile body-heavy|real] [--schema v1|v2] [--torn]`: write one realistic execution directory.
 * Profile `body-heavy` (default; schema v1, large inline bodies) or `real` (shaped like the
 * reference runtime's journals; schema v2). Exit 0 ok, 1 failure, 2 usage.
 */
import { parseArgs } from "node:util";
import { isJournalError } from "@hankweave-journal/core";
import { PROFILE_NAMES, formatBytes, generateExecution, parseSize, type ProfileName, type SizeTarget } from "./generator/index.js";

const USAGE = "usage: generate.ts <out-exec> [--size 10MB | --events N] [--seed 1] [--profile body-heavy|real] [--schema v1|v2] [--torn]";
/** Default size when neither --size nor --events is given. */
export const DEFAULT_SIZE_BYTES = 10_000_000;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: {
        size: { type: "string" }, events: { type: "string" }, seed: { type: "string" }, schema: { type: "string" }, profile: { type: "string" },
        torn: { type: "boolean" }, help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let target: SizeTarget = { bytes: DEFAULT_SIZE_BYTES };
  if (values.size !== undefined && values.events !== undefined) {
    process.stderr.write(`--size and --events exclude each other\n${USAGE}\n`);
    return 2;
  }
  if (values.size !== undefined) {
    const b = parseSize(values.size);
    if (b === null) {
      process.stderr.write(`--size: not a size: ${values.size}\n`);
      return 2;
    }
    target = { bytes: b };
  }
  if (values.events !== undefined) {
    const n = Number(values.events);
    if (!Number.isInteger(n) || n < 1) {
      process.stderr.write(`--events: not a positive integer: ${values.events}\n`);
      return 2;
    }
    target = { events: n };
  }
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) {
    process.stderr.write(`--seed: not a non-negative integer: ${values.seed}\n`);
    return 2;
  }
  const profile = (values.profile ?? "body-heavy") as ProfileName;
  if (!PROFILE_NAMES.includes(profile)) {
    process.stderr.write(`--profile: ${PROFILE_NAMES.join(" or ")}, not ${values.profile}\n`);
    return 2;
  }
  const schemaText = values.schema;
  if (schemaText !== undefined && schemaText !== "v1" && schemaText !== "v2") {
    process.stderr.write(`--schema: v1 or v2, not ${schemaText}\n`);
    return 2;
  }
  try {
    const report = await generateExecution(positionals[0], {
      seed, target, profile, schema: schemaText === undefined ? undefined : schemaText === "v1" ? 1 : 2, torn: values.torn === true,
      onProgress: process.stderr.isTTY ? (b) => process.stderr.write(`\r${formatBytes(b)}…`) : undefined,
    });
    if (process.stderr.isTTY) process.stderr.write("\r");
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return 0;
  } catch (e) {
    if (isJournalError(e)) {
      process.stderr.write(`error ${e.code}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

process.exitCode = await main();
