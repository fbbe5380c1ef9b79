/**
 * Diet benchmark (format §5–6): compatible and extended diet time and stored size, restore
 * throughput, random line reads and peak RSS, beside `zstd -3 -T2`, `zstd -19 -T2` and `zstd -d`
 * on the same journal in the same run.
 *
 *   node --import tsx tools/src/bench-diet.ts [--size 100MB] [--seed 1] [--no-zstd19] [--modes compatible,extended] [--allow-large] [--keep]
 *
 * Input: a realistic execution from the generator (`tools/src/generator`, event schema v1 with
 * inline file bodies). Each measured operation runs in its own child process so its peak RSS
 * (maxRSS) and CPU time are its own; restore and `zstd -d` report the median of 3 runs, and the
 * restored file's SHA-256 is checked against the original. Input is capped at 100 MB on this
 * shared machine unless `--allow-large`.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet, openReader, restoreJournal } from "@hankweave-journal/diet";
import { generateExecution, parseSize } from "./generator/index.js";

const SELF = fileURLToPath(import.meta.url);
const MAX_INPUT_BYTES = 100_000_000;
const RANDOM_READS = 200;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const flag = (name: string): boolean => process.argv.includes(`--${name}`);
const rssMB = (): number => Math.round(process.resourceUsage().maxRSS / 1024);

/** Child mode: run one operation, print {ms, maxRssMB, ...} as JSON. */
async function child(op: string, exec: string): Promise<void> {
  const t0 = performance.now();
  let extra: Record<string, unknown> = {};
  if (op === "diet-compatible" || op === "diet-extended") {
    const frameTargetBytes = process.env.BENCH_FRAME_BYTES ? Number(process.env.BENCH_FRAME_BYTES) : undefined;
    const r = await applyDiet(exec, { kind: op === "diet-extended" ? "extended" : "compatible", frameTargetBytes });
    extra = { stored: r.stored, bodies: r.bodies };
  } else if (op === "restore") {
    await restoreJournal(exec);
  } else if (op === "reads") {
    const reader = await openReader(exec);
    const info = await reader.info();
    const lines = info.lines ?? 0;
    const times: number[] = [];
    let seed = 12345;
    for (let i = 0; i < RANDOM_READS; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = seed % lines;
      const s = performance.now();
      await reader.getLine(n);
      times.push(performance.now() - s);
    }
    await reader.close();
    times.sort((a, b) => a - b);
    extra = { reads: RANDOM_READS, medianMs: +times[times.length >> 1].toFixed(2), p95Ms: +times[Math.floor(times.length * 0.95)].toFixed(2), maxMs: +times[times.length - 1].toFixed(2) };
  } else {
    throw new Error(`unknown op ${op}`);
  }
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ ms: Math.round(performance.now() - t0), cpuMs: Math.round((cpu.user + cpu.system) / 1000), maxRssMB: rssMB(), ...extra }));
}

function runOp(op: string, exec: string): { ms: number } & Record<string, any> {
  const r = spawnSync(process.execPath, ["--import", "tsx", SELF, "--child", op, exec], { encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${op} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

function timeCmd(cmd: string, args: string[]): { ms: number; cpuMs: number; maxRssMB: number } {
  const t0 = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", cmd, ...args], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const [kb, user, sys] = r.stderr.trim().split("\n").pop()!.split(" ").map(Number);
  return { ms: Math.round(performance.now() - t0), cpuMs: Math.round((user + sys) * 1000), maxRssMB: Math.round(kb / 1024) };
}

/** Median by wall time of `n` runs. */
function medianOf<T extends { ms: number }>(n: number, run: () => T): T {
  const all = Array.from({ length: n }, run).sort((a, b) => a.ms - b.ms);
  return all[all.length >> 1];
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

async function main(): Promise<void> {
  const ci = process.argv.indexOf("--child");
  if (ci >= 0) return child(process.argv[ci + 1], process.argv[ci + 2]);
  const size = parseSize(arg("size") ?? "100MB");
  if (size === null || (size > MAX_INPUT_BYTES && !flag("allow-large"))) {
    throw new Error(`--size must be a size ≤ 100 MB on this shared machine (--allow-large overrides), got ${arg("size")}`);
  }
  const seed = Number(arg("seed") ?? 1);
  const root = mkdtempSync(path.join(os.tmpdir(), "bench-diet-"));
  const log = (s: string) => process.stderr.write(s + "\n");
  try {
    const src = path.join(root, "src");
    const gen = await generateExecution(src, { seed, target: { bytes: size }, schema: 1 });
    const journal = layoutOf(src).journal;
    const bytes = gen.bytes;
    const mbps = (ms: number) => +(bytes / 1e6 / (ms / 1000)).toFixed(1);
    const originalSha = spawnSync("sha256sum", [journal], { encoding: "utf8" }).stdout.split(" ")[0];
    log(`journal: ${bytes} bytes, ${gen.lines} lines`);

    const z3 = timeCmd("zstd", ["-3", "-T2", "-q", "-f", journal, "-o", path.join(root, "j.zst3")]);
    const z3Bytes = statSync(path.join(root, "j.zst3")).size;
    const zd = medianOf(3, () => timeCmd("zstd", ["-d", "-q", "-f", path.join(root, "j.zst3"), "-o", path.join(root, "j.out")]));
    rmSync(path.join(root, "j.out"), { force: true });
    let z19: { ms: number; cpuMs: number; bytes: number } | null = null;
    if (!flag("no-zstd19")) {
      const t = timeCmd("zstd", ["-19", "-T2", "-q", "-f", journal, "-o", path.join(root, "j.zst19")]);
      z19 = { ms: t.ms, cpuMs: t.cpuMs, bytes: statSync(path.join(root, "j.zst19")).size };
    }
    log(`zstd -3: ${z3.ms} ms ${z3Bytes} B; zstd -d: ${zd.ms} ms; zstd -19: ${z19?.ms} ms ${z19?.bytes} B`);

    const results: Record<string, unknown> = {};
    const modes = (arg("modes") ?? "compatible,extended").split(",") as ("compatible" | "extended")[];
    for (const mode of modes) {
      const exec = path.join(root, mode);
      cpSync(src, exec, { recursive: true });
      const d = runOp(`diet-${mode}`, exec);
      const stored = d.stored.totalBytes as number;
      const casOnDisk = dirBytes(layoutOf(exec).casDir);
      const reads = runOp("reads", exec);
      // zstd -d of our own pointer journal, to a file on the same disk (like for like).
      const zdOwn = medianOf(3, () => timeCmd("zstd", ["-d", "-q", "-f", layoutOf(exec).dietedJournal, "-o", path.join(root, "p.out")]));
      rmSync(path.join(root, "p.out"), { force: true });
      const restore = medianOf(3, () => {
        rmSync(layoutOf(exec).journal, { force: true });
        return runOp("restore", exec);
      });
      const restored = spawnSync("sha256sum", [layoutOf(exec).journal], { encoding: "utf8" }).stdout.split(" ")[0];
      if (restored !== originalSha) throw new Error(`restored journal differs: ${restored} vs ${originalSha}`);
      results[mode] = {
        dietMs: d.ms, dietCpuMs: d.cpuMs, dietMBps: mbps(d.ms), dietMaxRssMB: d.maxRssMB, storedBytes: stored, casBytesOnDisk: casOnDisk,
        pointerJournalBytes: d.stored.pointerJournalBytes, bodies: d.bodies,
        sizeVsZstd3: +(stored / z3Bytes).toFixed(3), speedVsZstd3: +(z3.ms / d.ms).toFixed(3),
        sizeVsZstd19: z19 ? +(stored / z19.bytes).toFixed(3) : null, speedVsZstd19: z19 ? +(z19.ms / d.ms).toFixed(2) : null,
        restoreMs: restore.ms, restoreCpuMs: restore.cpuMs, restoreMBps: mbps(restore.ms), restoreVsZstdD: +(zd.ms / restore.ms).toFixed(3), restoreMaxRssMB: restore.maxRssMB,
        zstdDOwnPointerMs: zdOwn.ms, restoreVsZstdDOwn: +(zdOwn.ms / restore.ms).toFixed(3),
        randomLine: { medianMs: reads.medianMs, p95Ms: reads.p95Ms, maxMs: reads.maxMs, maxRssMB: reads.maxRssMB },
      };
      log(`${mode}: ${JSON.stringify(results[mode])}`);
      rmSync(exec, { recursive: true, force: true });
    }
    const out = {
      input: { bytes, lines: gen.lines, seed },
      zstd3: { ms: z3.ms, cpuMs: z3.cpuMs, MBps: mbps(z3.ms), bytes: z3Bytes },
      zstd19: z19 ? { ms: z19.ms, cpuMs: z19.cpuMs, MBps: mbps(z19.ms), bytes: z19.bytes } : null,
      zstdD: { ms: zd.ms, cpuMs: zd.cpuMs, MBps: mbps(zd.ms), maxRssMB: zd.maxRssMB },
      ...results,
      loadAverage: os.loadavg().map((x) => +x.toFixed(1)),
    };
    process.stdout.write(JSON.stringify(out, null, 2) + "\n");
  } finally {
    if (!flag("keep")) rmSync(root, { recursive: true, force: true });
    else log(`kept ${root}`);
  }
}

await main();
