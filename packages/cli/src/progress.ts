/**
 * Progress on stderr for any long command, when stderr is a terminal (never otherwise: data on
 * stdout and logs stay clean). It needs no plumbing through the libraries: it reads this
 * process's I/O counters (`/proc/self/io`: `rchar`, bytes read, or `wchar`, bytes written, as the
 * command declares) against the size of the work (by default the journal being read; `restore`
 * counts the bytes it writes against the original size), and redraws one line every 250 ms once
 * the command has run for 1 s, with rate and ETA. Where `/proc` is absent it shows the elapsed time.
 *
 * The line never collides with output: every write through the wrapped `io` (stdout or stderr)
 * clears it first, and it is not redrawn until output has been quiet for a second, so results are
 * never glued onto it and no stale line stays in the scrollback. A library (cli-progress,
 * log-update) would draw the line but not know about our I/O counters or the writes it must yield
 * to; the drawing is one escape sequence, so it is written here.
 *
 * @example const p = startProgress(io, "rebuild", { counter: "read", total: 1e9 }); try { await run(p.io) } finally { p.stop(); }
 */
import { readFileSync, statSync } from "node:fs";
import type { ExecLayout } from "@hankweave-journal/core";
import type { CliIO, ProgressMeasure } from "./io.js";

/** Redraw period of the progress line. */
export const PROGRESS_EVERY_MS = 250;
/** Commands that finish sooner never show a progress line; output pauses it for as long. */
export const PROGRESS_AFTER_MS = 1000;
/** Erase the current terminal line and return to its start. */
export const CLEAR_LINE = "\r\x1b[2K";

function ioCounter(counter: ProgressMeasure["counter"]): number | null {
  try {
    const key = counter === "read" ? "rchar" : "wchar";
    const m = new RegExp(`^${key}:\\s*(\\d+)$`, "m").exec(readFileSync("/proc/self/io", "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Size of what a command over `layout` reads: events.jsonl, else the dieted journal; null if neither. */
export function journalBytesOf(layout: ExecLayout): number | null {
  for (const p of [layout.journal, layout.dietedJournal]) {
    try {
      const st = statSync(p);
      if (st.isFile()) return st.size;
    } catch {
      // absent: try the next form
    }
  }
  return null;
}

/** The default measure: bytes read against the journal's size. */
export function readMeasure(layout: ExecLayout): ProgressMeasure {
  return { counter: "read", total: journalBytesOf(layout) };
}

function human(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.round(bytes / 1e3)} kB`;
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s` : `${s} s`;
}

/**
 * The text of one progress line (pure, for tests). `done` is the bytes counted since the start;
 * a command that goes over its input again (verify --deep, diet's verify pass) shows the pass and
 * the bytes of that pass, never more than the total.
 */
export function progressLine(label: string, elapsedMs: number, done: number | null, total: number | null, verb = "read"): string {
  const secs = duration(elapsedMs);
  if (done === null || total === null || total === 0) return `${label}: ${secs}`;
  const pass = Math.floor(done / total);
  const inPass = done - pass * total;
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? ((total - inPass) / rate) * 1000 : null;
  const passText = pass >= 1 ? ` (pass ${pass + 1})` : "";
  const pct = Math.floor((inPass / total) * 100);
  const rateText = rate > 0 ? `, ${human(rate)}/s` : "";
  const etaText = eta === null ? "" : `, ETA ${duration(eta)}`;
  return `${label}: ${human(inPass)} of ${human(total)} ${verb}${passText}, ${pct}%${rateText}${etaText}, ${secs}`;
}

/** A running progress line: `io` is the command's I/O with every write clearing the line first. */
export interface Progress {
  io: CliIO;
  stop(): void;
}

/**
 * Start the progress line for `label` (when stderr is a TTY). `measure` null shows elapsed time.
 * `io.env.HANKWEAVE_PROGRESS_AFTER_MS` / `HANKWEAVE_PROGRESS_EVERY_MS` change the timings (tests).
 */
export function startProgress(io: CliIO, label: string, measure: ProgressMeasure | null): Progress {
  if (!io.stderrIsTTY) return { io, stop: () => undefined };
  const afterMs = Number(io.env.HANKWEAVE_PROGRESS_AFTER_MS ?? PROGRESS_AFTER_MS);
  const everyMs = Number(io.env.HANKWEAVE_PROGRESS_EVERY_MS ?? PROGRESS_EVERY_MS);
  const counter = measure?.counter ?? "read";
  const total = measure?.total ?? null;
  const base = ioCounter(counter);
  const started = Date.now();
  let quietSince = started;
  let shown = false;
  const clear = (): void => {
    if (shown) io.stderr(CLEAR_LINE);
    shown = false;
    quietSince = Date.now();
  };
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - quietSince < afterMs) return;
    const count = ioCounter(counter);
    const done = count === null || base === null ? null : count - base;
    io.stderr(`${CLEAR_LINE}${progressLine(label, now - started, done, total, counter)}`);
    shown = true;
  }, everyMs);
  timer.unref();
  const wrapped: CliIO = {
    ...io,
    stdout: (chunk) => {
      clear();
      return io.stdout(chunk);
    },
    stderr: (chunk) => {
      clear();
      io.stderr(chunk);
    },
  };
  return {
    io: wrapped,
    stop: () => {
      clearInterval(timer);
      if (shown) io.stderr(CLEAR_LINE);
      shown = false;
    },
  };
}
