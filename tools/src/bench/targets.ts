/**
 * The performance targets of the issues, checked against bench rows per (profile, size). Each
 * verdict is met or not met; a target whose measurement is absent (an input it needs did not
 * run or failed) is **not met**, never a skip (issue 18: "an absent target is a failure"). A
 * target set at a size (rebuild, index, line N at 1 GB; restore at ≥ 100 MB) is report-only
 * below it, with its ratio still shown; report-only lines also show comparisons no issue sets.
 */
import type { ProfileName } from "../generator/profile.js";
import type { BenchRow } from "./harness.js";

export interface TargetVerdict {
  profile: ProfileName;
  sizeBytes: number;
  op: string;
  target: string;
  /** true met, false not met (or absent), null report-only. */
  met: boolean | null;
  actual: string;
  /** A comparison printed beside the targets that is not judged (no target, or below its size). */
  reportOnly?: boolean;
}

const fmt = (x: number, d = 2): string => x.toFixed(d);

/** The compatible diet's targets per profile (issue 18): size ≤ × zstd -3, speed ≥ × zstd -3. */
export const COMPATIBLE_TARGETS: Readonly<Record<ProfileName, { size: number; speed: number }>> = {
  real: { size: 1.02, speed: 0.8 },
  "body-heavy": { size: 1.15, speed: 0.3 },
};

/** Sizes at which an issue sets a target (below: report-only, the ratio still shown). */
export const SET_AT_BYTES = { rebuild: 1e9, index: 1e9, lineN: 1e9, restore: 1e8 } as const;

/** Evaluate every target at every (profile, size) present in `rows` (the fleet rows have no target). */
export function evaluateTargets(all: BenchRow[]): TargetVerdict[] {
  const rows = all.filter((r): r is BenchRow & { profile: ProfileName } => r.profile !== "fleet");
  const out: TargetVerdict[] = [];
  const groups = new Map<string, { profile: ProfileName; size: number }>();
  for (const r of rows) groups.set(`${r.profile}\0${r.sizeBytes}`, { profile: r.profile, size: r.sizeBytes });
  for (const { profile, size } of groups.values()) {
    const mine = rows.filter((r) => r.profile === profile && r.sizeBytes === size);
    const get = (op: string, contender: string): BenchRow | undefined => mine.find((r) => r.op === op && r.contender === contender && r.status === "ok");
    const has = (op: string): boolean => mine.some((r) => r.op === op);
    /** Why a row is absent (its n/a or failure note), for the verdict's actual cell. */
    const why = (op: string, contender: string): string => {
      const r = mine.find((x) => x.op === op && x.contender === contender);
      return r ? `absent: ${(r.note ?? r.status).replace(/^n\/a \((.*)\)$/, "$1")}` : "absent";
    };
    const push = (v: Omit<TargetVerdict, "profile" | "sizeBytes">, setAt?: number): void => {
      const t: TargetVerdict = { profile, sizeBytes: size, ...v };
      if (setAt !== undefined && size < setAt && !t.reportOnly) {
        t.target += ` (set at ≥ ${setAt >= 1e9 ? `${setAt / 1e9} GB` : `${setAt / 1e6} MB`})`;
        t.met = null;
        t.reportOnly = true;
      }
      out.push(t);
    };
    /** Baseline time ÷ ours, or an absent reason. */
    const ratioOf = (op: string, ours: string, base: string): number | string => {
      const a = get(op, ours);
      const b = get(op, base);
      if (!a || a.medianMs === null) return why(op, ours);
      if (!b || b.medianMs === null) return why(op, base);
      return b.medianMs / a.medianMs;
    };
    const speed = (op: string, ours: string, base: string, min: number, label: string, setAt?: number): void => {
      if (!has(op)) return;
      const r = ratioOf(op, ours, base);
      push({ op, target: label, met: typeof r === "number" ? r >= min : false, actual: typeof r === "number" ? `${fmt(r)}×` : r }, setAt);
    };
    const report = (op: string, ours: string, base: string, label: string): void => {
      if (!has(op)) return;
      const r = ratioOf(op, ours, base);
      push({ op, target: label, met: null, actual: typeof r === "number" ? `${fmt(r)}×` : r, reportOnly: true });
    };
    const rss = (op: string, ours: string, maxMB: number, label: string, setAt?: number): void => {
      if (!has(op)) return;
      const a = get(op, ours);
      if (!a || a.peakRssMB === null) push({ op, target: label, met: false, actual: a ? "absent: RSS not measured" : why(op, ours) }, setAt);
      else push({ op, target: label, met: a.peakRssMB < maxMB, actual: `${fmt(a.peakRssMB, 0)} MB` }, setAt);
    };
    const sizeRatio = (op: string, base: string, max: number, strict: boolean, label: string): void => {
      if (!has(op)) return;
      const a = get(op, "ours");
      const b = get(op, base);
      if (!a?.outputBytes || !b?.outputBytes) {
        push({ op, target: label, met: false, actual: !a?.outputBytes ? why(op, "ours") : why(op, base) });
        return;
      }
      const r = a.outputBytes / b.outputBytes;
      push({ op, target: label, met: strict ? r < max : r <= max, actual: `${fmt(r, 3)}× size` });
    };
    const millis = (op: string, contender: string, maxMs: number, label: string, setAt?: number, reportOnly = false): void => {
      if (!has(op)) return;
      const a = get(op, contender);
      if (!a || a.medianMs === null) push({ op, target: label, met: reportOnly ? null : false, actual: why(op, contender), reportOnly: reportOnly || undefined }, setAt);
      else push({ op, target: label, met: reportOnly ? null : a.medianMs < maxMs, actual: `${fmt(a.medianMs, 1)} ms`, reportOnly: reportOnly || undefined }, setAt);
    };

    // Issue 3 (rebuild), issue 5 (index): at ≥ 1 GB.
    speed("rebuild", "ours", "naive fold", 3, "≥ 3× naive fold", SET_AT_BYTES.rebuild);
    speed("rebuild", "ours", "jq | fold", 10, "≥ 10× jq pipeline", SET_AT_BYTES.rebuild);
    rss("rebuild", "ours", 200, "peak RSS < 200 MB", SET_AT_BYTES.rebuild);
    speed("index", "ours", "sqlite bulk insert", 0.7, "speed ≥ 0.7× plain bulk insert", SET_AT_BYTES.index);
    rss("read", "ours", 256, "peak RSS < 256 MB");
    // Issue 18: the compatible diet per profile, the extended diet on both.
    const ct = COMPATIBLE_TARGETS[profile];
    sizeRatio("diet-compatible", "zstd -3 -T2", ct.size, false, `size ≤ ${ct.size}× zstd -3`);
    speed("diet-compatible", "ours", "zstd -3 -T2", ct.speed, `speed ≥ ${ct.speed}× zstd -3`);
    sizeRatio("diet-extended", "zstd -19 -T2", 1, true, "smaller than zstd -19");
    speed("diet-extended", "ours", "zstd -19 -T2", 10, "speed ≥ 10× zstd -19");
    // Issue 18 item 4 (format §6): restore against zstd -d + fsync, both diets, at ≥ 100 MB; plain zstd -d beside it.
    for (const kind of ["compatible", "extended"]) {
      const c = `ours (${kind})`;
      speed("restore", c, "zstd -d + fsync", 1, `${kind}: speed ≥ 1.0× zstd -d + fsync`, SET_AT_BYTES.restore);
      report("restore", c, "zstd -d", `${kind}: speed vs zstd -d (no fsync)`);
      rss("restore", c, 256, `${kind}: peak RSS < 256 MB`, SET_AT_BYTES.restore);
    }
    report("restore", "ours (seekable)", "zstd -d + fsync", "seekable: speed vs zstd -d + fsync");
    // The same restores as a process of their own (node start-up and module loading included), timed
    // by the parent as the zstd baselines are: what a user waits for. Report only (no issue sets it).
    for (const kind of ["compatible", "extended"]) {
      report("restore", `ours (${kind}), whole process`, "zstd -d + fsync", `${kind}, whole process: speed vs zstd -d + fsync`);
    }
    // Issue 18: extended line N < 20 ms at 1 GB; issue 4: plain and seekable line N < 20 ms at 1 GB;
    // issue 13: what line N costs on a one-frame compatible diet (streamed up to the line), report-only.
    millis("line-n", "ours (extended)", 20, "extended: line N < 20 ms", SET_AT_BYTES.lineN);
    millis("line-n", "ours (plain)", 20, "plain: line N < 20 ms", SET_AT_BYTES.lineN);
    millis("line-n", "ours (seekable)", 20, "seekable: line N < 20 ms", SET_AT_BYTES.lineN);
    millis("line-n", "ours (compatible)", 0, "one frame: line N (streamed)", undefined, true);
    rss("line-n", "ours (compatible)", 256, "one frame: line N peak RSS < 256 MB");
    millis("cat-line", "ours (compatible)", 0, "one frame: cat --from-line N", undefined, true);
    millis("cat-line", "ours (seekable)", 0, "seekable: cat --from-line N", undefined, true);
    millis("cat-line", "ours (extended)", 0, "extended: cat --from-line N", undefined, true);
    millis("cat-line", "ours (extended), whole process", 0, "extended: cat --from-line N, whole process", undefined, true);
  }
  return out;
}
