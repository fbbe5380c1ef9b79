/**
 * Test fixture of the export tests (imported by `*.int.test.ts` only): a fleet root with copies of
 * the conformance executions (plain), two of them dieted (compatible and extended), and small
 * generated executions; and the questions the tests ask of every engine (per-codon cost, attempts
 * by outcome, failure reasons, durations), answered from the fold and from the SQLite index as
 * normalised, sorted text lines so answers of different engines compare with `toEqual`.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { auditExecution, buildIndex, queryIndex } from "@hankweave-journal/audit";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { generateExecution } from "../../../../tools/src/generator/index.js";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
/** The conformance folder (override with HANKWEAVE_CONFORMANCE). */
export const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");

function writable(p: string): void {
  chmodSync(p, statSync(p).isDirectory() ? 0o755 : 0o644);
  if (statSync(p).isDirectory()) for (const e of readdirSync(p)) writable(path.join(p, e));
}

/** The conformance executions (directories with a .hankweave/). */
export function conformanceNames(): string[] {
  if (!existsSync(CONF)) return [];
  // Those with a journal (plain or dieted); one of them is a run that never journaled.
  return readdirSync(CONF).filter((n) => existsSync(layoutOf(path.join(CONF, n)).journal) || existsSync(layoutOf(path.join(CONF, n)).manifest)).sort();
}

/** Copy conformance execution `name` to `dest` (made writable). */
export function copyConformance(name: string, dest: string): string {
  cpSync(path.join(CONF, name), dest, { recursive: true });
  writable(dest);
  return dest;
}

/** A fresh temp directory under the OS temp dir. */
export function tempDir(prefix: string): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface Fleet {
  root: string;
  /** Every execution: path relative to the root → absolute path. */
  execs: Record<string, string>;
}

/**
 * A fleet under a new temp root: `conf/<name>` for each conformance execution, `dieted/<name>-compatible`
 * and `dieted/<name>-extended` (diets of one of them), `gen/g<seed>` generated executions of
 * about `genBytes` each.
 */
export async function buildFleet(opts: { gen: number[]; genBytes: number; diet: boolean }): Promise<Fleet> {
  const root = tempDir("hw-fexport-");
  const execs: Record<string, string> = {};
  const names = conformanceNames();
  for (const n of names) execs[`conf/${n}`] = copyConformance(n, path.join(root, "conf", n));
  if (opts.diet && names.includes("budget-loop-replay")) {
    for (const kind of ["compatible", "extended"] as const) {
      const rel = `dieted/budget-loop-replay-${kind}`;
      execs[rel] = copyConformance("budget-loop-replay", path.join(root, rel));
      await applyDiet(execs[rel], { kind, force: true });
    }
  }
  for (const seed of opts.gen) {
    const rel = `gen/g${seed}`;
    mkdirSync(path.join(root, "gen"), { recursive: true });
    await generateExecution(path.join(root, rel), { seed, target: { bytes: opts.genBytes } });
    execs[rel] = path.join(root, rel);
  }
  return { root, execs };
}

const r9 = (x: number): string => (Math.round(x * 1e9) / 1e9).toFixed(9);

/** The four questions as normalised lines: `q|execution_path|…`. Sorted. */
export type Answers = string[];

/** One attempt as every engine reports it. */
export interface AttemptFacts {
  path: string;
  codon: string;
  attempt: number;
  outcome: string;
  cost: number;
  failureReason: string | null;
  startTime: string | null;
  endTime: string | null;
  /** end − start in ms (null when not ended). */
  durationMs: number | null;
}

/** The questions' answers from per-attempt facts (what each engine's SQL computes is compared with this). */
export function answersOf(rows: { path: string; codon: string; cost: number; n: number }[], outcomes: { path: string; outcome: string; n: number }[],
  reasons: { path: string; codon: string; attempt: number; reason: string }[], durations: { path: string; codon: string; attempt: number; ms: number }[]): Answers {
  return [
    ...rows.map((r) => `cost|${r.path}|${r.codon}|${r9(r.cost)}|${r.n}`),
    ...outcomes.map((r) => `outcome|${r.path}|${r.outcome}|${r.n}`),
    ...reasons.map((r) => `reason|${r.path}|${r.codon}|${r.attempt}|${r.reason}`),
    ...durations.map((r) => `duration|${r.path}|${r.codon}|${r.attempt}|${r.ms}`),
  ].sort();
}

/** The answers computed in JavaScript from the fold (`auditExecution(...).runs`). */
export async function foldAnswers(fleet: Fleet): Promise<Answers> {
  const cost = new Map<string, { path: string; codon: string; cost: number; n: number }>();
  const outc = new Map<string, { path: string; outcome: string; n: number }>();
  const reasons: { path: string; codon: string; attempt: number; reason: string }[] = [];
  const durations: { path: string; codon: string; attempt: number; ms: number }[] = [];
  for (const [rel, exec] of Object.entries(fleet.execs)) {
    const a = await auditExecution(exec);
    for (const run of a.runs) {
      for (const t of run.attempts) {
        const c = cost.get(`${rel}|${t.codon}`) ?? { path: rel, codon: t.codon, cost: 0, n: 0 };
        c.cost += t.cost;
        c.n += 1;
        cost.set(`${rel}|${t.codon}`, c);
        const o = outc.get(`${rel}|${t.outcome}`) ?? { path: rel, outcome: t.outcome, n: 0 };
        o.n += 1;
        outc.set(`${rel}|${t.outcome}`, o);
        if (t.failureReason !== null) reasons.push({ path: rel, codon: t.codon, attempt: t.attempt, reason: t.failureReason });
        if (t.endTime !== null && t.startTime) durations.push({ path: rel, codon: t.codon, attempt: t.attempt, ms: Date.parse(t.endTime) - Date.parse(t.startTime) });
      }
    }
  }
  return answersOf([...cost.values()], [...outc.values()], reasons, durations);
}

/** The answers from each execution's SQLite index (`index` + `query`), built first. */
export async function indexAnswers(fleet: Fleet): Promise<Answers> {
  const cost: { path: string; codon: string; cost: number; n: number }[] = [];
  const outc: { path: string; outcome: string; n: number }[] = [];
  const reasons: { path: string; codon: string; attempt: number; reason: string }[] = [];
  const durations: { path: string; codon: string; attempt: number; ms: number }[] = [];
  for (const [rel, exec] of Object.entries(fleet.execs)) {
    await buildIndex(exec);
    for (const [codon, c, n] of queryIndex(exec, "SELECT codon, sum(cost), count(*) FROM codon_attempts GROUP BY codon").rows as [string, number, number][]) cost.push({ path: rel, codon, cost: c, n });
    for (const [outcome, n] of queryIndex(exec, "SELECT outcome, count(*) FROM codon_attempts GROUP BY outcome").rows as [string, number][]) outc.push({ path: rel, outcome, n });
    for (const [codon, attempt, reason] of queryIndex(exec, "SELECT codon, attempt, failure_reason FROM codon_attempts WHERE failure_reason IS NOT NULL").rows as [string, number, string][]) reasons.push({ path: rel, codon, attempt, reason });
    const d = queryIndex(exec, "SELECT codon, attempt, CAST(round((julianday(end_time) - julianday(start_time)) * 86400000) AS INTEGER) FROM codon_attempts WHERE end_time IS NOT NULL AND start_time IS NOT NULL");
    for (const [codon, attempt, ms] of d.rows as [string, number, number][]) durations.push({ path: rel, codon, attempt, ms });
  }
  return answersOf(cost, outc, reasons, durations);
}

/** The four questions in SQL over the export's tables (DuckDB dialect). */
export const DUCKDB_QUESTIONS = {
  cost: "SELECT execution_path, codon, sum(cost) AS cost, count(*) AS n FROM codon_attempts GROUP BY ALL",
  outcome: "SELECT execution_path, outcome, count(*) AS n FROM codon_attempts GROUP BY ALL",
  reason: "SELECT execution_path, codon, attempt, failure_reason FROM codon_attempts WHERE failure_reason IS NOT NULL",
  duration: "SELECT execution_path, codon, attempt, epoch_ms(end_time::TIMESTAMPTZ) - epoch_ms(start_time::TIMESTAMPTZ) AS ms FROM codon_attempts WHERE end_time IS NOT NULL AND start_time IS NOT NULL",
};

/** Answers from rows of the four questions (in the column order of DUCKDB_QUESTIONS). */
export function answersFromRows(q: Record<keyof typeof DUCKDB_QUESTIONS, unknown[][]>): Answers {
  return answersOf(
    q.cost.map(([p, codon, c, n]) => ({ path: String(p), codon: String(codon), cost: Number(c), n: Number(n) })),
    q.outcome.map(([p, outcome, n]) => ({ path: String(p), outcome: String(outcome), n: Number(n) })),
    q.reason.map(([p, codon, attempt, reason]) => ({ path: String(p), codon: String(codon), attempt: Number(attempt), reason: String(reason) })),
    q.duration.map(([p, codon, attempt, ms]) => ({ path: String(p), codon: String(codon), attempt: Number(attempt), ms: Number(ms) })),
  );
}
