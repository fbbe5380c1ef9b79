import { describe, expect, it } from "vitest";
import type { BenchRow } from "./harness.js";
import { evaluateTargets } from "./targets.js";
import { verdict } from "./table.js";

const GB = 1_000_000_000;
function row(op: string, contender: string, medianMs: number | null, extra: Partial<BenchRow> = {}): BenchRow {
  return {
    profile: "real", sizeBytes: GB, op, contender, role: contender.startsWith("ours") ? "ours" : "baseline", throughputUnit: "MB/s",
    status: medianMs === null ? "failed" : "ok", note: null, medianMs, roundsMs: medianMs === null ? [] : [medianMs],
    throughput: null, ratio: null, ratioTo: null, peakRssMB: 180, outputBytes: null, ...extra,
  };
}
const find = (v: ReturnType<typeof evaluateTargets>, target: string) => v.find((t) => t.target === target)!;

describe("evaluateTargets", () => {
  it("judges restore against zstd -d + fsync and reports plain zstd -d beside it", () => {
    const v = evaluateTargets([
      row("restore", "ours (compatible)", 4000), row("restore", "ours (extended)", 3000),
      row("restore", "zstd -d", 1200), row("restore", "zstd -d + fsync", 3400),
    ]);
    const target = find(v, "compatible: speed ≥ 1.0× zstd -d + fsync");
    expect(target).toMatchObject({ met: false, actual: "0.85×" });
    expect(verdict(target)).toBe("NOT met");
    expect(find(v, "extended: speed ≥ 1.0× zstd -d + fsync")).toMatchObject({ met: true, actual: "1.13×" });
    const plain = find(v, "compatible: speed vs zstd -d (no fsync)");
    expect(plain).toMatchObject({ met: null, actual: "0.30×", reportOnly: true });
    expect(verdict(plain)).toBe("report only");
    expect(find(v, "compatible: peak RSS < 256 MB")).toMatchObject({ met: true, actual: "180 MB" });
  });

  it("reports the whole-process restores and cat beside the targets without judging them", () => {
    const v = evaluateTargets([
      row("restore", "ours (extended)", 400), row("restore", "ours (extended), whole process", 500),
      row("restore", "zstd -d + fsync", 440),
      row("cat-line", "ours (extended), whole process", 130),
    ]);
    expect(find(v, "extended: speed ≥ 1.0× zstd -d + fsync")).toMatchObject({ met: true, actual: "1.10×" });
    const whole = find(v, "extended, whole process: speed vs zstd -d + fsync");
    expect(whole).toMatchObject({ met: null, actual: "0.88×", reportOnly: true });
    expect(verdict(whole)).toBe("report only");
    expect(find(v, "compatible, whole process: speed vs zstd -d + fsync")).toMatchObject({ met: null, actual: "absent" });
    expect(find(v, "extended: cat --from-line N, whole process")).toMatchObject({ met: null, actual: "130.0 ms" });
  });

  it("an absent measurement is a failure, not a skip, and says why", () => {
    const v = evaluateTargets([
      row("restore", "ours (compatible)", 1000), row("restore", "zstd -d + fsync", null),
      row("diet-extended", "ours", 5000, { outputBytes: 90 }),
      row("diet-extended", "zstd -19 -T2", null, { status: "n/a", note: "n/a (zstd missing)" }),
      row("line-n", "ours (extended)", null, { status: "n/a", note: "n/a (extended diet failed (exit 1))" }),
    ]);
    const t = find(v, "compatible: speed ≥ 1.0× zstd -d + fsync");
    expect(t).toMatchObject({ met: false, actual: "absent: failed" });
    expect(verdict(t)).toBe("NOT met");
    expect(find(v, "extended: speed ≥ 1.0× zstd -d + fsync")).toMatchObject({ met: false });
    expect(find(v, "smaller than zstd -19")).toMatchObject({ met: false, actual: "absent: zstd missing" });
    expect(find(v, "speed ≥ 10× zstd -19")).toMatchObject({ met: false });
    expect(find(v, "extended: line N < 20 ms")).toMatchObject({ met: false, actual: "absent: extended diet failed (exit 1)" });
  });

  it("sets the compatible diet's bounds per profile (real 1.02× / 0.8×, body-heavy 1.15× / 0.3×)", () => {
    const rows = (profile: BenchRow["profile"]) => [
      row("diet-compatible", "ours", 2000, { profile, outputBytes: 110 }),
      row("diet-compatible", "zstd -3 -T2", 1000, { profile, outputBytes: 100 }),
    ];
    const real = evaluateTargets(rows("real"));
    expect(find(real, "size ≤ 1.02× zstd -3")).toMatchObject({ met: false, actual: "1.100× size" });
    expect(find(real, "speed ≥ 0.8× zstd -3")).toMatchObject({ met: false, actual: "0.50×" });
    const heavy = evaluateTargets(rows("body-heavy"));
    expect(find(heavy, "size ≤ 1.15× zstd -3")).toMatchObject({ met: true, profile: "body-heavy" });
    expect(find(heavy, "speed ≥ 0.3× zstd -3")).toMatchObject({ met: true });
  });

  it("judges the extended diet: strictly smaller than zstd -19 and ≥ 10× its speed", () => {
    const v = evaluateTargets([row("diet-extended", "ours", 10_000, { outputBytes: 100 }), row("diet-extended", "zstd -19 -T2", 100_000, { outputBytes: 100 })]);
    expect(find(v, "smaller than zstd -19")).toMatchObject({ met: false, actual: "1.000× size" });
    expect(find(v, "speed ≥ 10× zstd -19")).toMatchObject({ met: true, actual: "10.00×" });
  });
});

describe("targets set at a size", () => {
  it("are judged at that size and report-only below, with the ratio still shown", () => {
    const at = (sizeBytes: number) => [row("rebuild", "ours", 300, { sizeBytes }), row("rebuild", "naive fold", 800, { sizeBytes })];
    const big = find(evaluateTargets(at(1e9)), "≥ 3× naive fold");
    expect(big).toMatchObject({ met: false, actual: "2.67×" });
    expect(big.reportOnly).toBeUndefined();
    const small = evaluateTargets(at(1e8)).find((t) => t.target.startsWith("≥ 3× naive fold"))!;
    expect(small).toMatchObject({ met: null, actual: "2.67×", reportOnly: true, target: "≥ 3× naive fold (set at ≥ 1 GB)" });
    expect(verdict(small)).toBe("report only");
    // Restore's targets are set at ≥ 100 MB: judged at 100 MB, report-only at 10 MB.
    const restore = (sizeBytes: number) => evaluateTargets([row("restore", "ours (compatible)", 1000, { sizeBytes }), row("restore", "zstd -d + fsync", 200, { sizeBytes })]);
    expect(restore(1e8).find((t) => t.target === "compatible: speed ≥ 1.0× zstd -d + fsync")).toMatchObject({ met: false, actual: "0.20×" });
    expect(restore(1e7).find((t) => t.target.startsWith("compatible: speed ≥ 1.0×"))).toMatchObject({ met: null, reportOnly: true });
    // Line N on the extended diet: 20 ms at 1 GB; the one-frame diet's cost is reported, never judged.
    const line = evaluateTargets([row("line-n", "ours (extended)", 12), row("line-n", "ours (compatible)", 900)]);
    expect(find(line, "extended: line N < 20 ms")).toMatchObject({ met: true, actual: "12.0 ms" });
    expect(find(line, "one frame: line N (streamed)")).toMatchObject({ met: null, actual: "900.0 ms", reportOnly: true });
  });
});
