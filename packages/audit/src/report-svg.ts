/**
 * Pure SVG pieces of the report: the codon-attempt timeline of a run and its cumulative cost
 * curve. Strings only; every value placed in markup goes through `esc`.
 */
import type { AttemptOutcome, CodonAttempt, RunSummary } from "./audit-types.js";
import type { CostPoint } from "./report-data.js";
import { tokenTotal } from "./outcomes.js";
import type { SummaryGroup } from "./summary.js";

/** Colours of the outcomes (also used by the legend). */
export const OUTCOME_COLORS: Record<AttemptOutcome, string> = {
  completed: "#2e9d57", failed: "#d64545", skipped: "#9aa0a6", running: "#3b82f6", crashed: "#7c2d8c",
};

/** HTML/XML escape. */
export function esc(v: unknown): string {
  return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** `1h 02m`, `3m 07s`, `4.2s`, `120ms`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** Dollars: 4 decimals under $10, else 2. */
export function money(v: number): string {
  return `$${v.toFixed(Math.abs(v) < 10 ? 4 : 2)}`;
}

/** The label of an attempt: codon id (with the loop iteration as `#n` when the id lacks it) and `attempt n` for retries. */
export function attemptLabel(a: CodonAttempt): string {
  let name = a.codon;
  if (a.loop !== null && !/#\d+$/.test(name)) name += `#${a.loop.iteration}`;
  return a.attempt > 1 ? `${name} · attempt ${a.attempt}` : name;
}

const LABEL_W = 280;
const CHART_W = 900;
const ROW_H = 24;
const BAR_H = 16;
const AXIS_H = 26;
/** Room right of the plot for the cost note of a bar that ends at the right edge. */
const RIGHT_PAD = 70;
/** Room right of the chart for bar notes (duration, cost, reason). */
const NOTE_W = 420;

function ticks(t0: number, t1: number, n: number): number[] {
  const span = Math.max(1, t1 - t0);
  const steps = [1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 216e5, 864e5];
  const step = steps.find((s) => span / s <= n) ?? steps[steps.length - 1];
  const out: number[] = [];
  for (let v = 0; v <= span + 1; v += step) out.push(t0 + v);
  return out;
}

/** Time window of a run: start to the latest end among run and attempts (or the last transition). */
export function runWindow(run: RunSummary, lastTime: string | null, series: CostPoint[] = []): { t0: number; t1: number } {
  // The journal's last time only stretches a run that has not ended (its open bars end there).
  const times = [run.startTime, run.endTime, run.endTime === null ? lastTime : null, ...run.attempts.flatMap((a) => [a.startTime, a.endTime])]
    .filter((x): x is string => typeof x === "string").map((x) => Date.parse(x)).filter((x) => !Number.isNaN(x));
  for (const p of series) times.push(p.t);
  const t0 = Math.min(...times, Date.parse(run.startTime));
  const t1 = Math.max(...times, t0 + 1000);
  return { t0, t1 };
}

/** Text of at most `n` characters (an ellipsis when cut). */
export function clipText(v: string, n: number): string {
  return v.length > n ? `${v.slice(0, n - 1)}…` : v;
}

/**
 * The timeline: one row per group (a codon with its retries or loop iterations, see
 * `groupAttempts`), each attempt a bar from start to end coloured by outcome
 * (`data-codon-attempt` on each), its duration and cost written next to it, and for a failed,
 * crashed or skipped attempt its reason too (visible text, not only the hover title).
 */
export function timelineSvg(run: RunSummary, lastTime: string | null, series: CostPoint[] = [], groups?: SummaryGroup[]): string {
  const { t0, t1 } = runWindow(run, lastTime, series);
  const x = (t: number): number => LABEL_W + ((t - t0) / (t1 - t0)) * (CHART_W - RIGHT_PAD);
  const rows = groups ?? run.attempts.map((a, i) => ({ label: attemptLabel(a), members: [i] }));
  const height = AXIS_H + rows.length * ROW_H + 6;
  const parts: string[] = [];
  parts.push(`<svg class="timeline" viewBox="0 0 ${LABEL_W + CHART_W + NOTE_W} ${height}" width="100%" role="img" aria-label="codon attempts of run ${esc(run.run)} over time">`);
  for (const t of ticks(t0, t1, 10)) {
    const px = x(t).toFixed(1);
    parts.push(`<line x1="${px}" x2="${px}" y1="${AXIS_H - 6}" y2="${height}" class="grid"/>`);
    parts.push(`<text x="${px}" y="${AXIS_H - 10}" class="tick" text-anchor="middle">+${esc(formatDuration(t - t0))}</text>`);
  }
  rows.forEach((g, i) => {
    const y = AXIS_H + i * ROW_H;
    if (i % 2 === 1) parts.push(`<rect x="0" y="${y}" width="${LABEL_W + CHART_W + NOTE_W}" height="${ROW_H}" class="stripe"/>`);
    parts.push(`<text x="${LABEL_W - 8}" y="${y + ROW_H / 2 + 4}" text-anchor="end" class="label">${esc(clipText(g.label, 40))}</text>`);
    let rightmost = 0;
    let note = "";
    for (const k of g.members) {
      const a = run.attempts[k];
      const start = Date.parse(a.startTime);
      const endMs = a.endTime !== null ? Date.parse(a.endTime) : t1;
      const x0 = x(Number.isNaN(start) ? t0 : start);
      const w = Math.max(3, x(Number.isNaN(endMs) ? t1 : endMs) - x0);
      const dur = formatDuration((Number.isNaN(endMs) ? t1 : endMs) - start);
      const tip = [
        `${attemptLabel(a)}: ${a.outcome}`,
        `start ${a.startTime}`, `end ${a.endTime ?? "(not ended)"}`,
        `duration ${dur}`,
        `cost ${money(a.cost)}, ${tokenTotal(a.tokens)} tokens`,
        `journal lines ${a.startLine}–${a.endLine ?? "…"}`,
        ...(a.reason !== null ? [`reason: ${a.reason}`] : []),
      ].join("\n");
      parts.push(
        `<g data-codon-attempt="${esc(`${a.run}/${a.codon}/${a.attempt}`)}" data-outcome="${a.outcome}">` +
          `<title>${esc(tip)}</title>` +
          `<rect x="${x0.toFixed(1)}" y="${y + (ROW_H - BAR_H) / 2}" width="${w.toFixed(1)}" height="${BAR_H}" rx="3" fill="${OUTCOME_COLORS[a.outcome]}"` +
          `${a.outcome === "running" ? ' class="open"' : ""}/>` +
          // The duration inside a bar wide enough for it.
          (w >= 46 && g.members.length === 1 ? `<text x="${(x0 + 4).toFixed(1)}" y="${y + ROW_H / 2 + 4}" class="inbar">${esc(dur)}</text>` : "") +
          `</g>`,
      );
      if (x0 + w >= rightmost) rightmost = x0 + w;
      if (g.members.length === 1) note = `${dur} · ${money(a.cost)}${a.reason !== null ? ` · ${a.outcome}: ${clipText(a.reason, 70)}` : ""}`;
    }
    if (g.members.length > 1) {
      const ms = g.members.map((k) => run.attempts[k]);
      let total = 0;
      let cost = 0;
      for (const a of ms) {
        const d = a.endTime !== null ? Date.parse(a.endTime) - Date.parse(a.startTime) : 0;
        if (Number.isFinite(d)) total += d;
        cost += a.cost;
      }
      const bad = ms.filter((a) => a.reason !== null).length;
      note = `${ms.length} attempts · ${formatDuration(total)} · ${money(cost)}${bad > 0 ? ` · ${bad} not completed (see below)` : ""}`;
    }
    parts.push(`<text x="${(rightmost + 4).toFixed(1)}" y="${y + ROW_H / 2 + 4}" class="barnote">${esc(note)}</text>`);
  });
  parts.push(`</svg>`);
  return parts.join("");
}

/** The cumulative cost of a run over time as a step line with an area under it. */
export function costSvg(run: RunSummary, series: CostPoint[], lastTime: string | null): string {
  const { t0, t1 } = runWindow(run, lastTime, series);
  const W = LABEL_W + CHART_W + NOTE_W;
  const H = 180;
  const top = 14;
  const bottom = H - 24;
  const max = Math.max(1e-9, run.cost, ...series.map((p) => p.cost));
  const x = (t: number): number => LABEL_W + ((t - t0) / (t1 - t0)) * (CHART_W - RIGHT_PAD);
  const y = (c: number): number => bottom - (c / max) * (bottom - top);
  const parts = [`<svg class="cost" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="cumulative cost of run ${esc(run.run)}">`];
  for (let i = 0; i <= 4; i++) {
    const c = (max * i) / 4;
    parts.push(`<line x1="${LABEL_W}" x2="${W - NOTE_W - RIGHT_PAD}" y1="${y(c).toFixed(1)}" y2="${y(c).toFixed(1)}" class="grid"/>`);
    parts.push(`<text x="${LABEL_W - 8}" y="${(y(c) + 4).toFixed(1)}" text-anchor="end" class="tick">${esc(money(c))}</text>`);
  }
  for (const t of ticks(t0, t1, 10)) parts.push(`<text x="${x(t).toFixed(1)}" y="${H - 6}" class="tick" text-anchor="middle">+${esc(formatDuration(t - t0))}</text>`);
  if (series.length > 0) {
    let d = `M${x(t0).toFixed(1)},${y(0).toFixed(1)}`;
    let prevY = y(0);
    for (const p of series) {
      const px = x(p.t).toFixed(1);
      d += ` L${px},${prevY.toFixed(1)} L${px},${y(p.cost).toFixed(1)}`;
      prevY = y(p.cost);
    }
    d += ` L${x(t1).toFixed(1)},${prevY.toFixed(1)}`;
    parts.push(`<path d="${d} L${x(t1).toFixed(1)},${y(0).toFixed(1)} Z" class="area"/>`);
    parts.push(`<path d="${d}" class="line"/>`);
    // Where the line drops, say why: a skipped codon counts 0 in the runtime's rule, whatever it spent.
    let prev = 0;
    let noteRow = 0;
    for (const p of series) {
      if (p.cost < prev) {
        const a = run.attempts.find((x) => x.endLine === p.line);
        const why = a !== undefined && a.outcome === "skipped"
          ? `${attemptLabel(a)} skipped: a skipped codon costs 0, its ${money(prev - p.cost)} no longer counts`
          : `${money(prev - p.cost)} less after line ${p.line}`;
        const px = x(p.t);
        parts.push(`<line x1="${px.toFixed(1)}" x2="${px.toFixed(1)}" y1="${top}" y2="${bottom}" class="drop"/>`);
        parts.push(`<text x="${(px + 4).toFixed(1)}" y="${(top + 12 + 14 * (noteRow++ % 3)).toFixed(1)}" class="dropnote">▼ line ${p.line}: ${esc(why)}</text>`);
      }
      prev = p.cost;
    }
    const last = series[series.length - 1];
    parts.push(`<circle cx="${x(last.t).toFixed(1)}" cy="${y(last.cost).toFixed(1)}" r="3.5" class="dot"><title>${esc(`${money(last.cost)} after line ${last.line}`)}</title></circle>`);
  }
  parts.push(`</svg>`);
  return parts.join("");
}
