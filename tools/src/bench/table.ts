/** Plain-text and Markdown renderings of bench results (the table printed by `npm run bench`). */
import { formatBytes } from "../generator/size.js";
import type { BenchResult, BenchRow } from "./harness.js";
import type { TargetVerdict } from "./targets.js";
import { profileTable } from "./journal-profile.js";

/** Column headers, in order (the smoke test asserts them). */
export const TABLE_COLUMNS = ["profile", "size", "operation", "contender", "median", "throughput", "vs baseline", "peak RSS", "output"] as const;

const ms = (x: number): string => (x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(1)} ms`);

/** A verdict's last cell: met, NOT met, n/a, or "report only" for a comparison that is no target. */
export function verdict(t: TargetVerdict): string {
  if (t.reportOnly) return "report only";
  return t.met === null ? "n/a" : t.met ? "met" : "NOT met";
}

/** The cells of one row (same order as TABLE_COLUMNS). */
export function rowCells(r: BenchRow): string[] {
  const raw = r.status === "ok" ? null : r.note ?? r.status;
  const status = raw === null ? null : raw.length > 60 ? `${raw.slice(0, 57)}...` : raw;
  return [
    r.profile,
    formatBytes(r.sizeBytes),
    r.op,
    r.contender,
    status ?? ms(r.medianMs as number),
    status ? "" : r.throughputUnit === "MB/s" ? `${(r.throughput as number).toFixed(1)} MB/s` : `${Math.round(r.throughput as number)} ev/s`,
    r.ratio === null ? "" : `${r.ratio.toFixed(2)}× ${r.ratioTo}`,
    r.peakRssMB === null ? "" : `${r.peakRssMB.toFixed(0)} MB`,
    r.outputBytes === null ? "" : formatBytes(r.outputBytes),
  ];
}

/** A Markdown table of the rows plus the target verdicts (what docs/bench.md shows). */
export function renderMarkdown(res: BenchResult): string {
  const lines: string[] = [];
  lines.push(`| ${TABLE_COLUMNS.join(" | ")} |`);
  lines.push(`|${TABLE_COLUMNS.map(() => "---").join("|")}|`);
  const cell = (x: string): string => x.replace(/\|/g, "\\|");
  for (const r of res.rows) lines.push(`| ${rowCells(r).map(cell).join(" | ")} |`);
  lines.push("");
  lines.push("| profile | size | operation | target | actual | verdict |");
  lines.push("|---|---|---|---|---|---|");
  for (const t of res.targets) {
    lines.push(`| ${t.profile} | ${formatBytes(t.sizeBytes)} | ${t.op} | ${cell(t.target)} | ${cell(t.actual)} | ${verdict(t)} |`);
  }
  if (res.profiles.length > 0) {
    const pt = profileTable(res.profiles);
    lines.push("", `| ${pt[0].join(" | ")} |`, `|${pt[0].map(() => "---").join("|")}|`);
    for (const row of pt.slice(1)) lines.push(`| ${row.map(cell).join(" | ")} |`);
  }
  return `${lines.join("\n")}\n`;
}

/** An aligned plain-text table for the terminal. */
export function renderText(res: BenchResult): string {
  const cells = [Array.from(TABLE_COLUMNS), ...res.rows.map(rowCells)];
  const widths = TABLE_COLUMNS.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const fmtRow = (c: string[]): string => c.map((x, i) => x.padEnd(widths[i])).join("  ").trimEnd();
  const out = [fmtRow(cells[0]), widths.map((w) => "-".repeat(w)).join("  "), ...cells.slice(1).map(fmtRow)];
  const notes = res.rows.filter((r) => r.status === "ok" && r.note);
  if (notes.length > 0) {
    out.push("", "notes:");
    for (const r of notes) out.push(`  ${formatBytes(r.sizeBytes)} ${r.op} ${r.contender}: ${r.note}`);
  }
  out.push("");
  out.push("targets:");
  const targetWidth = Math.max(34, ...res.targets.map((t) => t.target.length));
  for (const t of res.targets) {
    out.push(`  ${t.profile.padEnd(10)} ${formatBytes(t.sizeBytes).padEnd(9)} ${t.op.padEnd(16)} ${t.target.padEnd(targetWidth)} ${t.actual.padEnd(14)} ${verdict(t)}`);
  }
  if (res.profiles.length > 0) {
    out.push("", "profiles beside plan-gen-execution (type share by count / by bytes; bodies = string fields ≥ 128 chars):");
    const pt = profileTable(res.profiles);
    const w = pt[0].map((_, i) => Math.max(...pt.map((r) => r[i].length)));
    for (const row of pt) out.push(`  ${row.map((x, i) => x.padEnd(w[i])).join("  ").trimEnd()}`);
    const sampled = res.profiles.filter((p) => p.profile.sampled).map((p) => p.name);
    if (sampled.length > 0) out.push(`  (${sampled.join(", ")}: profiled on 16 windows of 4 MB spread across the file; zstd ratios of the whole file)`);
  }
  for (const i of res.inputs) {
    out.push(`input ${i.profile} ${formatBytes(i.journalBytes)} (${i.lines} lines, seed ${res.options.seed})${i.generatedSeconds === null ? " reused" : ` generated in ${i.generatedSeconds.toFixed(1)} s`}: ${i.exec}`);
  }
  const how = res.runner === "bundle" ? "bundled runner (esbuild, as the CLI bin runs)" : "runner through tsx";
  if (res.rssFloorMB !== null) out.push(`\nour children ran as the ${how}; peak RSS includes its node floor of ${res.rssFloorMB.toFixed(0)} MB (an empty runner child).`);
  if (res.missingTools.length > 0) out.push(`missing tools: ${res.missingTools.join("; ")}`);
  return `${out.join("\n")}\n`;
}
