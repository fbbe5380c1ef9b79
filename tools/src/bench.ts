/**
 * `npm run bench [-- --profile real|body-heavy|all] [--quick | --smoke | --size 100MB[,1GB]]
 * [--only rebuild,diet] [--rounds 3]`: runs every operation against its baselines on inputs of
 * each generator profile and size, and prints a table of medians, the targets and the profiles
 * beside conformance/plan-gen-execution; writes the full result as JSON to
 * `bench-results/bench-<date>.json` (gitignored). Exit 0 ok, 1 failure, 2 usage.
 *
 * Modes: default = 100 MB and 1 GB, 3 rounds; `--quick` = 100 MB, 3 rounds;
 * `--smoke` = a ~400 KB input, 1 round (seconds; the test suite runs it). Profile default: real.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseSize } from "./generator/size.js";
import { PROFILE_NAMES, type ProfileName } from "./generator/profile.js";
import { DEFAULT_WORK_DIR, runBench, type BenchOptions } from "./bench/harness.js";
import { parseFleetFlags } from "./bench/fleet.js";
import { REPO_ROOT } from "./bench/measure.js";
import { renderMarkdown, renderText } from "./bench/table.js";

const USAGE = `usage: npm run bench -- [--profile real|body-heavy|fleet|all] [--quick | --smoke] [--size 100MB[,1GB]] [--only op[,op]]
                      [--rounds N] [--seed N] [--fresh-baselines] [--out FILE.json] [--markdown FILE.md] [--work DIR] [--no-install]
                      [--fleet-small N] [--fleet-big NxSIZE]   (the fleet profile: default 1000 small, 20x50MB)
operations: append-none append-batch append-every read rebuild audit verify index diet-compatible diet-seekable
            diet-extended restore line-n cat-line   (--only takes names or prefixes: --only diet,append)`;

/** Parse bench flags into options (pure). Throws a string on a usage error. */
export function parseBenchArgs(argv: string[]): { opts: Omit<BenchOptions, "log">; out: string | null; markdown: string | null } {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: "boolean" }, smoke: { type: "boolean" }, size: { type: "string" }, only: { type: "string" },
      rounds: { type: "string" }, seed: { type: "string" }, out: { type: "string" }, markdown: { type: "string" },
      work: { type: "string" }, "no-install": { type: "boolean" }, help: { type: "boolean", short: "h" },
      profile: { type: "string" }, "fresh-baselines": { type: "boolean" }, "fleet-small": { type: "string" }, "fleet-big": { type: "string" },
    },
  });
  if (values.help) throw USAGE;
  if (values.quick && values.smoke) throw "--quick and --smoke exclude each other";
  let sizes = values.smoke ? [400_000] : values.quick ? [100_000_000] : [100_000_000, 1_000_000_000];
  if (values.size !== undefined) {
    sizes = values.size.split(",").map((s) => {
      const b = parseSize(s);
      if (b === null) throw `--size: not a size: ${s}`;
      return b;
    });
  }
  const rounds = values.rounds === undefined ? (values.smoke ? 1 : 3) : Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw `--rounds: not a positive integer: ${values.rounds}`;
  const profileText = values.profile ?? "real";
  // `fleet` is its own profile (two generated fleets, fleet.ts), not a generator profile; `all` is the generator ones.
  const named = profileText === "all" ? [...PROFILE_NAMES] : profileText.split(",").map((s) => s.trim());
  const wantsFleet = named.includes("fleet");
  const profiles = named.filter((p) => p !== "fleet") as ProfileName[];
  for (const p of profiles) if (!PROFILE_NAMES.includes(p)) throw `--profile: ${PROFILE_NAMES.join(", ")}, fleet or all, not ${p}`;
  if (!wantsFleet && (values["fleet-small"] !== undefined || values["fleet-big"] !== undefined)) throw "--fleet-small/--fleet-big need --profile fleet";
  const fleet = wantsFleet ? parseFleetFlags(values["fleet-small"], values["fleet-big"], parseSize) : null;
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0) throw `--seed: not a non-negative integer: ${values.seed}`;
  return {
    opts: {
      sizes, profiles: [...new Set(profiles)], fleet, rounds, seed, smoke: values.smoke === true, quick: values.quick === true,
      only: values.only ? values.only.split(",").map((s) => s.trim()).filter((s) => s.length > 0) : null,
      workDir: values.work ?? DEFAULT_WORK_DIR,
      // zstd -19 takes minutes at 1 GB: measured once per input and kept (see operations.ts), unless this.
      freshBaselines: values["fresh-baselines"] === true, install: values["no-install"] !== true,
      timeoutMs: values.smoke ? 120_000 : 1_800_000,
    },
    out: values.out ?? null,
    markdown: values.markdown ?? null,
  };
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseBenchArgs(process.argv.slice(2));
  } catch (e) {
    if (e === USAGE) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    process.stderr.write(`${typeof e === "string" ? e : (e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const res = await runBench({ ...parsed.opts, log: (l) => process.stderr.write(`${l}\n`) });
  process.stdout.write(renderText(res));
  const out = parsed.out ?? join(REPO_ROOT, "bench-results", `bench-${res.startedAt.replace(/[:.]/g, "-")}.json`);
  mkdirSync(join(out, ".."), { recursive: true });
  writeFileSync(out, `${JSON.stringify(res, null, 2)}\n`);
  if (parsed.markdown) writeFileSync(parsed.markdown, renderMarkdown(res));
  process.stderr.write(`wrote ${out}\n`);
  return res.rows.some((r) => r.status === "failed") ? 1 : 0;
}

// Only when run as the entry point (the test imports parseBenchArgs).
if (process.argv[1] && /bench\.ts$/.test(process.argv[1])) process.exitCode = await main();
