/**
 * The bench's profile comparison (issue 18 item 1): each generated input beside
 * conformance/plan-gen-execution on the measures the real-shaped profile is calibrated on (type
 * mix by count and bytes, body sizes, body repeats, event schema, zstd -3 / -19 ratio of the
 * whole file). Inputs over SAMPLE_OVER_BYTES are profiled on evenly spread windows of whole lines;
 * their zstd ratios come from the bench's own zstd rows at that size (whole file), or are n/a
 * when those did not run. plan-gen's are measured once and kept under the work directory.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { formatBytes } from "../generator/size.js";
import type { BenchResult, BenchRow } from "./harness.js";
import { profileJournal, type ProfileSummary } from "./journal-profile.js";
import { REPO_ROOT, type Toolbox } from "./measure.js";

export type { ProfileSummary } from "./journal-profile.js";

/** Inputs larger than this are profiled on SAMPLE_WINDOWS windows of SAMPLE_WINDOW_BYTES. */
export const SAMPLE_OVER_BYTES = 128_000_000;
const SAMPLE_WINDOWS = 16;
const SAMPLE_WINDOW_BYTES = 4_000_000;

/** The reference journal, from the repo root (`../shared/conformance`). */
export const PLAN_GEN_EXEC = join(REPO_ROOT, "..", "shared", "conformance", "plan-gen-execution");

function sidecarSchema(exec: string): number | null {
  try {
    const v = (JSON.parse(readFileSync(layoutOf(exec).sidecar, "utf8")) as { eventSchemaVersion?: unknown }).eventSchemaVersion;
    return typeof v === "number" ? v : null;
  } catch {
    return null;
  }
}

/** Whole lines of the journal: all of it, or evenly spread windows when it is large. */
function journalSample(path: string): { buf: Buffer; sampled: boolean } {
  const size = statSync(path).size;
  if (size <= SAMPLE_OVER_BYTES) return { buf: readFileSync(path), sampled: false };
  const fd = openSync(path, "r");
  const parts: Buffer[] = [];
  try {
    const step = Math.floor(size / SAMPLE_WINDOWS);
    for (let w = 0; w < SAMPLE_WINDOWS; w++) {
      const b = Buffer.alloc(SAMPLE_WINDOW_BYTES);
      const n = readSync(fd, b, 0, b.length, w * step);
      const chunk = b.subarray(0, n);
      // A window starts after its first newline (window 0 at the file's start) and ends after its last.
      const first = w === 0 ? 0 : chunk.indexOf(10) + 1;
      const last = chunk.lastIndexOf(10) + 1;
      if ((w === 0 || first > 0) && last > first) parts.push(chunk.subarray(first, last));
    }
  } finally {
    closeSync(fd);
  }
  return { buf: Buffer.concat(parts), sampled: true };
}

/** zstd at `level` of a file, bytes (null without zstd or on failure). */
function zstdBytes(path: string, level: number, tools: Toolbox): number | null {
  if (!tools.zstd) return null;
  const r = spawnSync("sh", ["-c", `zstd -q -${level} -T2 -c '${path.replace(/'/g, "'\\''")}' | wc -c`], { encoding: "utf8", timeout: 600_000 });
  const n = Number((r.stdout ?? "").trim());
  return r.status === 0 && n > 0 ? n : null;
}

/** plan-gen-execution's summary (kept in `<workDir>/plan-gen.profile.json` after the first run), or null when absent. */
function planGen(workDir: string, tools: Toolbox, log: (l: string) => void): ProfileSummary | null {
  const journal = layoutOf(PLAN_GEN_EXEC).journal;
  if (!existsSync(journal)) {
    log(`${PLAN_GEN_EXEC} is absent: the profile comparison has no reference row`);
    return null;
  }
  const keep = join(workDir, "plan-gen.profile.json");
  const size = statSync(journal).size;
  try {
    const k = JSON.parse(readFileSync(keep, "utf8")) as ProfileSummary & { journalBytes: number };
    if (k.journalBytes === size && k.zstd3Ratio !== null && k.zstd19Ratio !== null) return k;
  } catch {
    /* measure it */
  }
  const z3 = zstdBytes(journal, 3, tools);
  const z19 = zstdBytes(journal, 19, tools);
  const s: ProfileSummary = {
    name: "plan-gen-execution", profile: profileJournal(readFileSync(journal)),
    zstd3Ratio: z3 ? size / z3 : null, zstd19Ratio: z19 ? size / z19 : null, eventSchemaVersion: sidecarSchema(PLAN_GEN_EXEC),
  };
  mkdirSync(workDir, { recursive: true });
  writeFileSync(keep, `${JSON.stringify({ ...s, journalBytes: size })}\n`);
  return s;
}

/** plan-gen-execution, then every input (profile, size), on the profile measures. */
export function compareProfiles(o: { inputs: BenchResult["inputs"]; rows: BenchRow[]; workDir: string; tools: Toolbox; log: (l: string) => void }): ProfileSummary[] {
  const out: ProfileSummary[] = [];
  const ref = planGen(o.workDir, o.tools, o.log);
  if (ref) out.push(ref);
  for (const inp of o.inputs) {
    const { buf, sampled } = journalSample(layoutOf(inp.exec).journal);
    const outOf = (contender: string): number | null => {
      const r = o.rows.find((x) => x.profile === inp.profile && x.sizeBytes === inp.sizeBytes && x.contender === contender && x.status === "ok" && x.outputBytes);
      return r?.outputBytes ? inp.journalBytes / r.outputBytes : null;
    };
    out.push({
      name: `${inp.profile} ${formatBytes(inp.sizeBytes)}`, profile: profileJournal(buf, { sampled }),
      zstd3Ratio: outOf("zstd -3 -T2"), zstd19Ratio: outOf("zstd -19 -T2"), eventSchemaVersion: sidecarSchema(inp.exec),
    });
  }
  return out;
}
