/**
 * Journal benchmark: append throughput (1 KB events) under each durability policy, and read
 * throughput + peak RSS of the plain reader beside `wc -l` and `jq -c .` on the same file.
 *
 *   node --import tsx tools/src/bench-journal.ts [--mb 100] [--json] [--keep]
 *
 * Each read contender runs in its own child process so its peak RSS (maxRSS) is its own. Input is
 * capped at 100 MB on this shared machine (`--mb` above that is refused).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { layoutOf } from "@hankweave-journal/core";
import { openJournalWriter, openPlainReader, type Durability, type NewEvent } from "@hankweave-journal/journal";

const SELF = fileURLToPath(import.meta.url);
const MAX_INPUT_MB = 100;
const EVENT_BODY_BYTES = 900; // + envelope ≈ 1 KB per line
const IN_FLIGHT = 256;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const TYPES = ["tool.result", "assistant.action", "token.usage", "tool.result", "assistant.action", "info", "sentinel.output", "tool.result", "assistant.action", "state.transition"];
function event(i: number): NewEvent {
  const type = TYPES[i % TYPES.length];
  const body = "x".repeat(EVENT_BODY_BYTES);
  return type === "state.transition"
    ? { type, data: { transitionType: "CostsIncremented", runId: "run-1", codonId: `c${i % 20}`, transition: { type: "CostsIncremented", data: { runId: "run-1", codonId: `c${i % 20}`, costDelta: 0.001 } }, pad: body.slice(0, 700) } }
    : { type, data: { seq: i, body } };
}

interface AppendResult {
  policy: Durability; mode: "sequential" | "concurrent"; events: number; seconds: number; eventsPerSec: number; mbPerSec: number;
  /** CPU time of this process per event (wall numbers on a shared, loaded machine understate throughput). */
  cpuMicrosPerEvent: number;
}

async function benchAppend(exec: string, policy: Durability, mode: "sequential" | "concurrent", n: number): Promise<AppendResult> {
  const w = await openJournalWriter(exec, { durability: policy });
  const startBytes = w.position().bytes;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  if (mode === "sequential") {
    for (let i = 0; i < n; i++) await w.append(event(i));
  } else {
    for (let i = 0; i < n; i += IN_FLIGHT) {
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, n - i) }, (_, k) => w.append(event(i + k))));
    }
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(c0);
  const bytes = w.position().bytes - startBytes;
  await w.close();
  return { policy, mode, events: n, seconds, eventsPerSec: Math.round(n / seconds), mbPerSec: +(bytes / 1048576 / seconds).toFixed(1), cpuMicrosPerEvent: +((cpu.user + cpu.system) / n).toFixed(1) };
}

/** Child mode: one read contender, prints {ms, events, maxRssMB}. */
async function child(mode: string, exec: string): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await openPlainReader(exec);
  let events = 0;
  if (mode === "lines") for await (const _ of r.lines()) events += 1;
  else if (mode === "events") for await (const _ of r.events()) events += 1;
  else if (mode === "types") for await (const _ of r.events({ types: ["state.transition"] })) events += 1;
  else if (mode === "tail") events = (await r.tail(100)).length;
  // mode "noop": open and close only, the baseline RSS of node + tsx + the reader module.
  await r.close();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ ms, cpuMs: Math.round((cpu.user + cpu.system) / 1000), events, maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

function timed(cmd: string, args: string[]): { ms: number; cpuMs: number; maxRssMB: number; stdout: string } {
  const r = spawnSync("/usr/bin/time", ["-f", "%e %M %U %S", cmd, ...args], { encoding: "utf8", maxBuffer: 1 << 20, shell: false });
  const [secs, kb, user, sys] = r.stderr.trim().split("\n").pop()!.split(" ").map(Number);
  return { ms: secs * 1000, cpuMs: Math.round((user + sys) * 1000), maxRssMB: Math.round(kb / 1024), stdout: r.stdout };
}

async function main(): Promise<void> {
  if (process.argv[2] === "--child") return child(process.argv[3], process.argv[4]);
  const mb = Number(arg("mb") ?? "100");
  if (!(mb > 0 && mb <= MAX_INPUT_MB)) throw new Error(`--mb must be in (0, ${MAX_INPUT_MB}]`);
  const json = process.argv.includes("--json");
  const root = mkdtempSync(`${os.tmpdir()}/bench-journal-`);
  const log = (s: string): void => void (json || process.stderr.write(s + "\n"));
  try {
    const appends: AppendResult[] = [];
    const plan: [Durability, "sequential" | "concurrent", number][] = [
      ["none", "sequential", 20_000], ["none", "concurrent", 20_000],
      ["batch", "sequential", 2_000], ["batch", "concurrent", 20_000],
      ["every", "sequential", 2_000], ["every", "concurrent", 2_000],
    ];
    for (const [policy, mode, n] of plan) {
      const exec = `${root}/append-${policy}-${mode}`;
      await import("node:fs").then((fs) => fs.mkdirSync(exec, { recursive: true }));
      const r = await benchAppend(exec, policy, mode, n);
      appends.push(r);
      log(`append ${policy.padEnd(5)} ${mode.padEnd(10)} ${r.events} events: ${r.eventsPerSec} events/s, ${r.mbPerSec} MB/s, ${r.cpuMicrosPerEvent} µs CPU/event`);
    }
    // The read corpus: ~mb MB written by the writer (durability none, concurrent).
    const exec = `${root}/read`;
    await import("node:fs").then((fs) => fs.mkdirSync(exec, { recursive: true }));
    const target = mb * 1024 * 1024;
    const w = await openJournalWriter(exec, { durability: "none" });
    for (let i = 0; w.position().bytes < target; i += IN_FLIGHT) {
      await Promise.all(Array.from({ length: IN_FLIGHT }, (_, k) => w.append(event(i + k))));
    }
    await w.close();
    const file = layoutOf(exec).journal;
    const bytes = statSync(file).size;
    const fileMB = bytes / 1048576;
    log(`read corpus: ${fileMB.toFixed(1)} MB (load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")})`);
    const reads: Record<string, { ms: number; cpuMs: number; events: number; mbPerSec: number; eventsPerSec: number; mbPerCpuSec: number; maxRssMB: number }> = {};
    for (const mode of ["noop", "lines", "events", "types", "tail"]) {
      const r = spawnSync(process.execPath, ["--import", "tsx", SELF, "--child", mode, exec], { encoding: "utf8" });
      const o = JSON.parse(r.stdout);
      reads[mode] = {
        ...o, mbPerSec: +(fileMB / (o.ms / 1000)).toFixed(1), eventsPerSec: Math.round(o.events / (o.ms / 1000)),
        mbPerCpuSec: +(fileMB / (Math.max(1, o.cpuMs) / 1000)).toFixed(1),
      };
      log(`read ${mode.padEnd(7)} ${o.events} items in ${o.ms.toFixed(0)} ms (CPU ${o.cpuMs} ms): ${reads[mode].mbPerSec} MB/s, peak RSS ${o.maxRssMB} MB`);
    }
    const wc = timed("wc", ["-l", file]);
    const lines = Number(wc.stdout.trim().split(" ")[0]);
    const jq = timed("sh", ["-c", `jq -c . "$0" > /dev/null`, file]);
    const tools = {
      "wc -l": { ms: wc.ms, cpuMs: wc.cpuMs, mbPerSec: +(fileMB / (wc.ms / 1000)).toFixed(1), maxRssMB: wc.maxRssMB },
      "jq -c .": { ms: jq.ms, cpuMs: jq.cpuMs, mbPerSec: +(fileMB / (jq.ms / 1000)).toFixed(1), eventsPerSec: Math.round(lines / (jq.ms / 1000)), maxRssMB: jq.maxRssMB },
    };
    log(`wc -l   ${lines} lines in ${wc.ms} ms (${tools["wc -l"].mbPerSec} MB/s), peak RSS ${wc.maxRssMB} MB`);
    log(`jq -c . in ${jq.ms} ms (${tools["jq -c ."].mbPerSec} MB/s), peak RSS ${jq.maxRssMB} MB`);
    if (json) process.stdout.write(JSON.stringify({ bytes, lines, appends, reads, tools, loadavg: os.loadavg() }) + "\n");
  } finally {
    if (!process.argv.includes("--keep")) rmSync(root, { recursive: true, force: true });
  }
}

await main();
