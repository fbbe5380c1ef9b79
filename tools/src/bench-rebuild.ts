/**
 * Rebuild benchmark: our streaming fold vs a naive fold (readFileSync → split → JSON.parse every
 * line → reduce) vs `jq -c 'select(.type=="state.transition")' | fold`, on a generated native
 * journal (written through the state engine: most lines are NOT transitions, like real runs).
 *
 *   node --import tsx tools/src/bench-rebuild.ts [--mb 100] [--dir <exec>] [--json]
 *
 * Each contender runs in its own child process so peak RSS (maxRSS) is its own. All three must
 * produce the same state (checked by SHA-256 of the state.json bytes, against ours and the saved
 * state.json). Generating through the engine is capped at 100 MB (`--mb`); any size can be given
 * with `--dir` (e.g. a journal from `tools/src/generate.ts --size 1GB`).
 *
 * The naive fold reads the whole file into ONE Buffer, splits it with `indexOf(10)`, decodes and
 * `JSON.parse`s every line and feeds it to the same `StateFolder` (a 1 GB file cannot be one V8
 * string: strings stop at ~512 MB, so no `toString().split()`). Times are CPU seconds of the fold
 * (process start and module loading excluded); `cpuWithStartupSeconds` is the child's whole CPU.
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { layoutOf, type StateTransition } from "@hankweave-journal/core";
import { foldExecution, openStateEngine, serializeState, StateFolder } from "@hankweave-journal/state";

const SELF = fileURLToPath(import.meta.url);
const MAX_INPUT_MB = 100;
const CODONS_PER_RUN = 20;
const WORDS = "the journal folds state from transitions while bodies of tool results stay unparsed and large".split(" ");

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function text(rnd: () => number, chars: number): string {
  let s = "";
  while (s.length < chars) s += WORDS[Math.floor(rnd() * WORDS.length)] + (rnd() < 0.1 ? "\n" : " ");
  return s;
}

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), a | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Write a native journal of about `mb` MB through the engine (saveState "close"). */
async function generate(exec: string, mb: number): Promise<void> {
  const rnd = mulberry(42);
  let ms = Date.parse("2026-01-01T00:00:00.000Z");
  const e = await openStateEngine(exec, { durability: "none", saveState: "close", now: () => (ms += 3), random: rnd, detectCrash: false });
  const tr = (type: string, data: Record<string, unknown>) => e.transition({ type, data } as unknown as StateTransition);
  await e.setPlan(Array.from({ length: CODONS_PER_RUN }, (_, i) => ({ codonId: `c${i}`, codon: { name: `codon ${i}`, promptText: text(rnd, 200) } })));
  const target = mb * 1024 * 1024;
  const zero = { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 };
  for (let r = 0; statSync(layoutOf(exec).journal).size < target; r++) {
    const runId = `run-${r}`;
    await tr("RunStarted", { runId, runFolder: `/x/${runId}`, gitBranch: `run-${runId}`, startingConditions: { type: "fresh" }, serverPid: process.pid });
    for (let c = 0; c < CODONS_PER_RUN; c++) {
      const codonId = `c${c}`;
      await tr("CodonStarted", { runId, codonId });
      await tr("CodonTransitioned", { runId, codonId, from: "preparing", to: "starting", metadata: {} });
      await tr("CodonTransitioned", { runId, codonId, from: "starting", to: "initializing", metadata: { claudePid: 100 + c, claudeLogPath: `${codonId}.log` } });
      await tr("CodonTransitioned", { runId, codonId, from: "initializing", to: "running", metadata: { claudeSessionId: `s-${r}-${c}` } });
      await e.append({ type: "codon.started", data: { codonId, codonName: codonId, sessionId: `s-${r}-${c}`, startTime: new Date(ms).toISOString() } });
      for (let turn = 0; turn < 8; turn++) {
        const cost = Math.round(rnd() * 1e6) / 1e8;
        await e.appendMany([
          { type: "token.usage", data: { codonId, inputTokens: 3, outputTokens: 40, cacheCreationTokens: 900, cacheReadTokens: 12000, totalCost: cost, modelId: "m" } },
          { type: "assistant.action", data: { codonId, action: "tool_use", content: text(rnd, 300), toolName: "Read", toolInput: { file_path: `/src/f${turn}.ts` } } },
          { type: "tool.result", data: { codonId, toolName: "Read", result: text(rnd, 1500 + Math.floor(rnd() * 2500)), isError: false } },
        ]);
        await tr("CostsIncremented", { runId, codonId, costDelta: cost, tokensDelta: { ...zero, inputTokens: 3, outputTokens: 40 } });
        await tr("AssistantMessageCountUpdated", { runId, codonId, newCount: turn + 1 });
      }
      await tr("CheckpointCreated", { runId, codonId, checkpointType: "completed", sha: `sha${r}${c}`, branch: "b" });
      await tr("CodonTransitioned", { runId, codonId, from: "running", to: "completed", metadata: { exitCode: 0, resultMessageReceived: true, checkpointSha: `sha${r}${c}` } });
      await e.append({ type: "codon.completed", data: { codonId, success: true, cost: 0.1 } });
    }
    await tr(rnd() < 0.9 ? "RunCompleted" : "RunFailed", { runId });
  }
  await e.close();
}

const sha = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 16);
const NEWLINE = 10;
const rssKB = (): number => process.resourceUsage().maxRSS;

/** Child modes: print one JSON line {ms, rssKB, state}. */
async function childMode(mode: string, exec: string): Promise<void> {
  let t0 = performance.now();
  let c0 = process.cpuUsage();
  let out: string;
  if (mode === "ours") {
    out = serializeState((await foldExecution(exec, { carry: false })).state);
  } else if (mode === "naive") {
    const folder = new StateFolder();
    const buf = readFileSync(layoutOf(exec).journal);
    let line = 0;
    for (let from = 0, nl = buf.indexOf(NEWLINE); nl >= 0; from = nl + 1, nl = buf.indexOf(NEWLINE, from), line++) {
      if (nl > from) folder.feed({ line, event: JSON.parse(buf.toString("utf8", from, nl)) });
    }
    out = serializeState(folder.result().state);
  } else {
    // stdin-fold: lines of transitions from jq
    const folder = new StateFolder();
    process.stdout.write("ready\n");
    t0 = performance.now();
    c0 = process.cpuUsage();
    let line = 0;
    for await (const l of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      if (l.length) folder.feed({ line: line++, event: JSON.parse(l) });
    }
    out = serializeState(folder.result().state);
  }
  const cpu = process.cpuUsage(c0);
  const all = process.cpuUsage();
  process.stdout.write(JSON.stringify({
    ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, allCpuMs: (all.user + all.system) / 1000, rssKB: rssKB(), state: sha(out),
  }) + "\n");
}

interface Result { name: string; ms: number; cpuMs: number; allCpuMs: number; rssMB: number; state: string; extraRssMB?: number }

function runChild(mode: string, exec: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ["--import", "tsx", SELF, "--child", mode, "--dir", exec], { stdio: ["ignore", "pipe", "inherit"] });
    let buf = "";
    c.stdout.on("data", (d: Buffer) => (buf += d.toString()));
    c.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`${mode} failed (${code})`));
      const j = JSON.parse(buf.trim().split("\n").pop() as string);
      resolve({ name: mode, ms: j.ms, cpuMs: j.cpuMs, allCpuMs: j.allCpuMs, rssMB: j.rssKB / 1024, state: j.state });
    });
  });
}

/** jq | fold: wall time from starting jq (the fold child is already loaded) to the fold's end. */
function runJq(exec: string): Promise<Result> {
  return new Promise((resolve, reject) => {
    const fold = spawn(process.execPath, ["--import", "tsx", SELF, "--child", "stdin", "--dir", exec], { stdio: ["pipe", "pipe", "inherit"] });
    let buf = "";
    let t0 = 0;
    let jqRssKB = 0;
    let jqCpuMs = 0;
    fold.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      if (t0 === 0 && buf.includes("ready\n")) {
        t0 = performance.now();
        // plan.updated is selected too so the three folds are comparable (same executionPlan, same origin).
        const jq = spawn("/usr/bin/time", ["-f", "%U %S %M", "jq", "-c", 'select(.type=="state.transition" or .type=="plan.updated")', layoutOf(exec).journal], { stdio: ["ignore", "pipe", "pipe"] });
        let err = "";
        jq.stderr.on("data", (e: Buffer) => (err += e.toString()));
        jq.on("exit", () => {
          const [u, sys, m] = (err.trim().split("\n").pop() as string).split(" ").map(Number);
          jqCpuMs = (u + sys) * 1000;
          jqRssKB = m;
        });
        jq.stdout.pipe(fold.stdin);
      }
    });
    fold.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`jq fold failed (${code})`));
      const j = JSON.parse(buf.trim().split("\n").pop() as string);
      const wall = performance.now() - t0;
      // jq's exit (and its /usr/bin/time line) may land just after the fold's: wait for it.
      const done = (): void => {
        if (jqCpuMs === 0 && performance.now() - t0 < wall + 2000) return void setTimeout(done, 20);
        resolve({ name: "jq | fold", ms: wall, cpuMs: j.cpuMs + jqCpuMs, allCpuMs: j.allCpuMs + jqCpuMs, rssMB: j.rssKB / 1024, extraRssMB: jqRssKB / 1024, state: j.state });
      };
      done();
    });
    fold.on("error", reject);
  });
}

async function main(): Promise<void> {
  const child = arg("child");
  if (child) return childMode(child, arg("dir") as string);
  const mb = Number(arg("mb") ?? "100");
  const given = arg("dir");
  if (!given && !(mb > 0 && mb <= MAX_INPUT_MB)) throw new Error(`--mb must be in (0, ${MAX_INPUT_MB}]`);
  const exec = given ?? mkdtempSync(path.join(os.tmpdir(), "bench-rebuild-"));
  if (!existsSync(layoutOf(exec).journal)) {
    const g0 = performance.now();
    await generate(exec, mb);
    process.stderr.write(`generated ${(statSync(layoutOf(exec).journal).size / 1048576).toFixed(1)} MB in ${((performance.now() - g0) / 1000).toFixed(1)} s\n`);
  }
  const bytes = statSync(layoutOf(exec).journal).size;
  const lines = Number(spawnSync("wc", ["-l", layoutOf(exec).journal]).stdout.toString().trim().split(" ")[0]);
  const transitions = Number(spawnSync("grep", ["-c", '"type":"state.transition"', layoutOf(exec).journal]).stdout.toString().trim());
  const saved = existsSync(layoutOf(exec).state) ? sha(readFileSync(layoutOf(exec).state, "utf8")) : null;
  const only = arg("only")?.split(",");
  const results: Result[] = [];
  for (const mode of ["ours", "naive"]) if (!only || only.includes(mode)) results.push(await runChild(mode, exec));
  if (!only || only.includes("jq")) results.push(await runJq(exec));
  const ours = results[0];
  // Speed is reported on CPU time (user + system, of jq + fold for the pipeline): on this shared
  // 2-core machine wall time swings with other load; wall time is reported beside it.
  const rows = results.map((r) => ({
    name: r.name, wallSeconds: +(r.ms / 1000).toFixed(3), cpuSeconds: +(r.cpuMs / 1000).toFixed(3),
    cpuWithStartupSeconds: +(r.allCpuMs / 1000).toFixed(3),
    mbPerCpuS: +(bytes / 1048576 / (r.cpuMs / 1000)).toFixed(1), linesPerCpuS: Math.round(lines / (r.cpuMs / 1000)),
    transitionsPerCpuS: Math.round(transitions / (r.cpuMs / 1000)), peakRssMB: +r.rssMB.toFixed(1),
    ...(r.extraRssMB !== undefined ? { jqPeakRssMB: +r.extraRssMB.toFixed(1) } : {}),
    cpuRatioVsOurs: +(r.cpuMs / ours.cpuMs).toFixed(2), wallRatioVsOurs: +(r.ms / ours.ms).toFixed(2),
    sameStateAsOurs: r.state === ours.state, sameStateAsSaved: r.state === saved,
  }));
  const report = { bytes, lines, transitions, rows };
  if (process.argv.includes("--json")) process.stdout.write(JSON.stringify(report) + "\n");
  else {
    process.stdout.write(`input ${(bytes / 1048576).toFixed(1)} MB, ${lines} lines, ${transitions} transitions\n`);
    for (const r of rows) {
      process.stdout.write(`${r.name.padEnd(10)} cpu ${String(r.cpuSeconds).padStart(7)} s (wall ${r.wallSeconds} s)  ${String(r.mbPerCpuS).padStart(6)} MB/s  ${String(r.linesPerCpuS).padStart(8)} lines/s  ${String(r.transitionsPerCpuS).padStart(7)} transitions/s  peak RSS ${r.peakRssMB} MB${r.jqPeakRssMB !== undefined ? ` (+ jq ${r.jqPeakRssMB} MB)` : ""}  ${r.cpuRatioVsOurs}x ours (cpu), ${r.wallRatioVsOurs}x (wall)  cpu incl. startup ${r.cpuWithStartupSeconds} s  same state as ours: ${r.sameStateAsOurs} (as saved state.json: ${r.sameStateAsSaved})\n`);
    }
  }
  if (!given) rmSync(exec, { recursive: true, force: true });
}

await main();
