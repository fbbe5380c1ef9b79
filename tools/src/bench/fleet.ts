/**
 * The bench's fleet profile (`npm run bench -- --profile fleet`, issue 19): two generated fleets
 * (default 1,000 small executions, and 20 × 50 MB; real profile; under `.bench/inputs`, made at
 * bench time and reused), and per fleet the rows: `fleet ls` against a bare `find` walk, `diet
 * --all` against a shell loop of single `diet` calls (same fleet, a fresh hard-link copy per
 * round), `verify --all` against a loop of `verify`, the Parquet `export` of the root against
 * DuckDB's own `read_json` over the raw journals, and an incremental re-export with one execution
 * changed against a full export of the same fleet. A command that has not landed is a row
 * "n/a (not implemented)".
 */
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { fleetExecPath, generateFleet } from "../generator/fleet.js";
import { GENERATOR_REVISION } from "../generator/profile.js";
import { formatBytes } from "../generator/size.js";
import { measure, runnerArgv, type Command, type Toolbox } from "./measure.js";
import { linkCopy, treeBytes, type Operation } from "./operations.js";

/** The two fleets: `small` executions of `smallBytes`, and `bigCount` × `bigBytes`. */
export interface FleetBenchSpec {
  small: number;
  smallBytes: number;
  bigCount: number;
  bigBytes: number;
}

/** The issue's fleets. `--fleet-small N` / `--fleet-big N×SIZE` shrink them for a quick run. */
export const FLEET_DEFAULTS: FleetBenchSpec = { small: 1000, smallBytes: 100_000, bigCount: 20, bigBytes: 50_000_000 };

/** One generated fleet. */
export interface FleetInput {
  name: string;
  root: string;
  executions: number;
  /** Sum of the executions' events.jsonl sizes. */
  journalBytes: number;
  generatedSeconds: number | null;
}

/** What the fleet operations need. */
export interface FleetContext {
  fleet: FleetInput;
  work: string;
  tools: Toolbox;
  commands: Set<string>;
  commandHelp: Map<string, string>;
}

const q = (s: string): string => `'${s.replace(/'/g, "'\\''")}'`;
const NOT_IMPLEMENTED = "n/a (not implemented)";

/** Generate (or reuse, same spec and generator revision) the fleet `count × bytesEach` under `inputsDir`. */
export async function fleetInput(inputsDir: string, count: number, bytesEach: number, seed: number, log: (s: string) => void): Promise<FleetInput> {
  const name = `fleet-${count}x${bytesEach}-seed${seed}-real`;
  const root = join(inputsDir, name);
  const marker = join(inputsDir, `${name}.json`);
  const paths = Array.from({ length: count }, (_, i) => fleetExecPath(root, i));
  const sizeOf = (): number => paths.reduce((n, p) => n + statSync(layoutOf(p).journal).size, 0);
  if (existsSync(marker)) {
    const m = JSON.parse(readFileSync(marker, "utf8")) as { revision?: number };
    if (m.revision === GENERATOR_REVISION) return { name, root, executions: count, journalBytes: sizeOf(), generatedSeconds: null };
  }
  rmSync(root, { recursive: true, force: true });
  log(`generating the fleet ${name}…`);
  let last = 0;
  const r = await generateFleet(root, {
    count, bytesEach, seed, profile: "real",
    onProgress: (n) => {
      if (n - last >= Math.max(1, Math.floor(count / 10))) {
        last = n;
        log(`  ${n}/${count} executions`);
      }
    },
  });
  writeFileSync(marker, JSON.stringify({ count, bytesEach, seed, revision: GENERATOR_REVISION }));
  return { name, root, executions: count, journalBytes: sizeOf(), generatedSeconds: r.seconds };
}

/** A shell command running our CLI once (the runner child: the same bundle as every other row). */
function cliShell(argv: string[]): string {
  return `${runnerArgv().map(q).join(" ")} ${q(JSON.stringify({ op: "cli", argv }))} >/dev/null`;
}

/** A shell script running `command <exec>` once per execution (the per-execution loop baseline). */
function loopScript(ctx: FleetContext, file: string, root: string, command: string[]): string {
  const lines = Array.from({ length: ctx.fleet.executions }, (_, i) => cliShell([command[0]!, fleetExecPath(root, i), ...command.slice(1)]));
  writeFileSync(file, `${lines.join(" || true\n")} || true\n`);
  return file;
}

/** A valid journal line appended to one execution (the incremental export's change). */
function touchLine(n: number): string {
  const t = new Date(Date.UTC(2026, 11, 1, 0, 0, n)).toISOString();
  return `${JSON.stringify({ id: `${Date.UTC(2026, 11, 1) + n}-bench${n}`, timestamp: t, type: "info", data: { message: `bench touch ${n}` } })}\n`;
}

/** The fleet operations, in table order (names are prefixed `fleet-` so `--only fleet` selects them). */
export function fleetOperations(ctx: FleetContext): Operation[] {
  const { root } = ctx.fleet;
  const ops: Operation[] = [];
  const has = (c: string): boolean => ctx.commands.has(c);
  const copy = (tag: string, round: number): string => {
    const dir = join(ctx.work, `${tag}-${round}`);
    linkCopy(root, dir);
    return dir;
  };

  ops.push({
    op: "fleet-ls",
    description: `fleet ls of ${ctx.fleet.executions} executions (--json)`,
    primary: "find -name .hankweave",
    contenders: [
      { name: "ours", role: "ours", unavailable: has("fleet") ? null : NOT_IMPLEMENTED, prepare: () => ({ runner: { op: "cli", argv: ["fleet", "ls", root, "--json"] } }) },
      { name: "find -name .hankweave", role: "baseline", unavailable: null, prepare: () => ({ shell: `find ${q(root)} -name .hankweave -type d -prune | wc -l >/dev/null` }) },
    ],
  });

  const batch = (op: "diet" | "verify"): Operation => {
    // diet changes its copy: a fresh hard-link copy per round (diet never modifies a file in place).
    const target = (tag: string, round: number): string => (op === "diet" ? copy(`${op}-${tag}`, round) : root);
    const ours = (jobs: number): { name: string; role: "ours"; unavailable: string | null; prepare(round: number): Command } => ({
      name: jobs === 1 ? `ours --all` : `ours --all --jobs ${jobs}`, role: "ours",
      unavailable: has(op) && (ctx.commandHelp.get(op) ?? "").includes("--all") ? null : NOT_IMPLEMENTED,
      prepare: (round) => ({ shell: cliShell([op, "--all", target(`all${jobs}`, round), "--jobs", String(jobs)]) }),
    });
    return {
      op: `fleet-${op}-all`,
      description: `${op} --all over ${ctx.fleet.executions} executions, against a shell loop of one \`${op}\` per execution (both start the CLI: wall time)`,
      primary: `shell loop of ${op}`,
      contenders: [
        ours(1), ours(2),
        {
          name: `shell loop of ${op}`, role: "baseline", oneRound: true, unavailable: has(op) ? null : NOT_IMPLEMENTED,
          prepare: (round) => ({ shell: `sh ${q(loopScript(ctx, join(ctx.work, `${op}-loop-${round}.sh`), target("loop", round), [op]))}` }),
        },
      ],
    };
  };
  ops.push(batch("diet"), batch("verify"));

  const parquetExport = has("export") && (ctx.commandHelp.get("export") ?? "").includes("parquet");
  const exportCmd = (src: string, out: string): Command => ({ runner: { op: "cli", argv: ["export", src, "-o", out] } });
  const exportOut = (tag: string, round: number): string => {
    const out = join(ctx.work, `export-${tag}-${round}`);
    rmSync(out, { recursive: true, force: true });
    return out;
  };
  ops.push({
    op: "fleet-export",
    description: `export of the root to Parquet (${ctx.fleet.executions} executions), against DuckDB's own read_json over the raw journals into Parquet`,
    primary: "duckdb read_json",
    contenders: [
      { name: "ours", role: "ours", unavailable: parquetExport ? null : NOT_IMPLEMENTED, prepare: (round) => exportCmd(root, exportOut("ours", round)), outputBytes: (round) => treeBytes(join(ctx.work, `export-ours-${round}`)) },
      {
        name: "duckdb read_json", role: "baseline", unavailable: null,
        prepare: (round) => {
          const out = join(ctx.work, `duckdb-${round}.parquet`);
          rmSync(out, { force: true });
          return { runner: { op: "duckdb-read-json", glob: join(root, "*", "*", ".hankweave", "events", "events.jsonl"), out } };
        },
        outputBytes: (round) => {
          const p = join(ctx.work, `duckdb-${round}.parquet`);
          return existsSync(p) ? statSync(p).size : 0;
        },
      },
    ],
  });

  // Incremental: one copy of the fleet exported once (untimed); each round changes one execution
  // (a line appended to a real copy of its journal, never to the hard-linked input) and re-exports.
  const incrRoot = join(ctx.work, "incr-root");
  const incrOut = join(ctx.work, "incr-out");
  let incrReady = false;
  const changeOne = (round: number): void => {
    if (!incrReady) {
      linkCopy(root, incrRoot);
      rmSync(incrOut, { recursive: true, force: true });
      measure(exportCmd(incrRoot, incrOut), ctx.tools, 1_800_000);
      incrReady = true;
    }
    const journal = layoutOf(fleetExecPath(incrRoot, round % ctx.fleet.executions)).journal;
    const bytes = readFileSync(journal);
    unlinkSync(journal);
    writeFileSync(journal, bytes);
    appendFileSync(journal, touchLine(round));
  };
  ops.push({
    op: "fleet-export-incremental",
    description: "re-export with one execution changed, against a full export of the same fleet",
    primary: "full export",
    contenders: [
      {
        name: "ours (1 changed)", role: "ours", unavailable: parquetExport ? null : NOT_IMPLEMENTED,
        prepare: (round) => {
          changeOne(round);
          return exportCmd(incrRoot, incrOut);
        },
      },
      {
        name: "full export", role: "baseline", unavailable: parquetExport ? null : NOT_IMPLEMENTED,
        prepare: (round) => {
          mkdirSync(ctx.work, { recursive: true });
          return exportCmd(root, exportOut("full", round));
        },
      },
    ],
  });
  return ops;
}

/** `--fleet-small N` and `--fleet-big N×SIZE` (e.g. `2x5MB`) into a spec; throws a string on a usage error. */
export function parseFleetFlags(small: string | undefined, big: string | undefined, parseSize: (s: string) => number | null): FleetBenchSpec {
  const spec = { ...FLEET_DEFAULTS };
  if (small !== undefined) {
    if (!/^\d+$/.test(small) || Number(small) < 1) throw `--fleet-small: not a positive integer: ${small}`;
    spec.small = Number(small);
  }
  if (big !== undefined) {
    const m = /^(\d+)[x×](.+)$/.exec(big);
    const bytes = m ? parseSize(m[2]!) : null;
    if (!m || Number(m[1]) < 1 || bytes === null) throw `--fleet-big: expected COUNTxSIZE (20x50MB), got ${big}`;
    spec.bigCount = Number(m[1]);
    spec.bigBytes = bytes;
  }
  return spec;
}

/** One line naming a fleet (logs and docs). */
export function fleetLabel(f: FleetInput): string {
  return `${f.executions} executions, ${formatBytes(f.journalBytes)}`;
}
