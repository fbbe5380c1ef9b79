/**
 * Progress on stderr for any long command, when stderr is a terminal (never otherwise: data on
 * stdout and logs stay clean). It needs no plumbing through the libraries: it reads this
 * process's I/O counter (`/proc/self/io` `rchar`, bytes read by the process) against the size of
 * the journal being read, and redraws one line every 250 ms once the command has run for 1 s.
 * Where `/proc` is absent it shows the elapsed time only.
 *
 * @example const stop = startProgress(io, "rebuild", "/runs/x"); try { … } finally { stop(); }
 */
import { readFileSync, statSync } from "node:fs";
import { layoutOf } from "@hankweave-journal/core";
import type { CliIO } from "./io.js";

/** Redraw period of the progress line. */
export const PROGRESS_EVERY_MS = 250;
/** Commands that finish sooner never show a progress line. */
export const PROGRESS_AFTER_MS = 1000;

function bytesReadByProcess(): number | null {
  try {
    const m = /^rchar:\s*(\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Size of what a command over `exec` reads: events.jsonl, else the dieted journal; null if neither. */
export function journalBytesOf(exec: string): number | null {
  const l = layoutOf(exec);
  for (const p of [l.journal, l.dietedJournal]) {
    try {
      const st = statSync(p);
      if (st.isFile()) return st.size;
    } catch {
      // absent: try the next form
    }
  }
  return null;
}

function human(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${Math.round(bytes / 1e3)} kB`;
}

/** The text of one progress line (pure, for tests). */
export function progressLine(label: string, elapsedMs: number, read: number | null, total: number | null): string {
  const secs = `${(elapsedMs / 1000).toFixed(0)} s`;
  if (read === null || total === null || total === 0) return `${label}: ${secs}`;
  // A command may read the journal more than once (verify --deep, diet's verify pass): show passes.
  const passes = read / total;
  const pct = Math.min(100, (passes % 1) * 100);
  const pass = passes >= 1 ? ` (pass ${Math.floor(passes) + 1})` : "";
  return `${label}: ${human(read)} read of ${human(total)}, ${pct.toFixed(0)}%${pass}, ${secs}`;
}

/** Start the progress line for `label` over `exec` (when stderr is a TTY); returns the stop function. */
export function startProgress(io: CliIO, label: string, exec: string | undefined): () => void {
  if (!io.stderrIsTTY) return () => undefined;
  const total = exec === undefined ? null : journalBytesOf(exec);
  const base = bytesReadByProcess();
  const started = Date.now();
  let shown = false;
  const timer = setInterval(() => {
    const elapsed = Date.now() - started;
    if (elapsed < PROGRESS_AFTER_MS) return;
    const now = bytesReadByProcess();
    const read = now === null || base === null ? null : now - base;
    io.stderr(`\r\x1b[2K${progressLine(label, elapsed, read, total)}`);
    shown = true;
  }, PROGRESS_EVERY_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    if (shown) io.stderr("\r\x1b[2K");
  };
}
