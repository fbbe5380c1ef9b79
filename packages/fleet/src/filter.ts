/**
 * The row filters and sort of `fleet ls` and the `--all` batch commands: `--status`,
 * `--finished-before <duration|date>`, `--sort <column>`. Pure (the clock is passed in).
 */
import { JournalError } from "@hankweave-journal/core";
import type { FleetRow } from "./execution-row.js";

/** What the newest run's status may be matched against (`none`: no run at all). */
export const STATUS_VALUES = ["running", "completed", "failed", "crashed", "none"] as const;
export type StatusValue = (typeof STATUS_VALUES)[number];

/** The sortable columns of a row. */
export const SORT_COLUMNS = ["path", "kind", "runs", "status", "ended", "cost", "events", "bytes", "lock"] as const;
export type SortColumn = (typeof SORT_COLUMNS)[number];

/** A row filter: every given condition must hold. */
export interface RowFilter {
  /** The newest run's status is one of these. */
  status?: StatusValue[];
  /** The newest run ended (has an endTime) strictly before this instant (ms since the epoch). */
  finishedBeforeMs?: number;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * `--finished-before`: a duration before `nowMs` (`90s`, `30m`, `12h`, `7d`, `2w`) or an ISO date
 * (`2026-11-30`, `2026-11-30T12:00:00Z`). Throws USAGE otherwise.
 * @example parseFinishedBefore("7d", Date.parse("2026-12-08T00:00:00Z")) // Date.parse("2026-12-01T00:00:00Z")
 */
export function parseFinishedBefore(text: string, nowMs: number): number {
  const d = /^(\d+)([smhdw])$/.exec(text);
  if (d) return nowMs - Number(d[1]) * UNIT_MS[d[2]!]!;
  if (/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    const t = Date.parse(text);
    if (Number.isFinite(t)) return t;
  }
  throw new JournalError("USAGE", `--finished-before expects a duration (90s, 30m, 12h, 7d, 2w) or a date (2026-11-30, 2026-11-30T12:00:00Z), got ${JSON.stringify(text)}`);
}

/** `--status a,b`: a comma-separated list of STATUS_VALUES. Throws USAGE otherwise. */
export function parseStatusList(text: string): StatusValue[] {
  const out: StatusValue[] = [];
  for (const s of text.split(",")) {
    if (!(STATUS_VALUES as readonly string[]).includes(s)) {
      throw new JournalError("USAGE", `--status expects ${STATUS_VALUES.join(", ")} (comma-separated), got ${JSON.stringify(s)}`);
    }
    out.push(s as StatusValue);
  }
  return out;
}

/** `--sort`: one of SORT_COLUMNS. Throws USAGE otherwise. */
export function parseSortColumn(text: string): SortColumn {
  if (!(SORT_COLUMNS as readonly string[]).includes(text)) throw new JournalError("USAGE", `--sort expects one of ${SORT_COLUMNS.join(", ")}, got ${JSON.stringify(text)}`);
  return text as SortColumn;
}

/** True when the filter has no condition (the batch then needs no row facts to decide). */
export function isEmptyFilter(f: RowFilter): boolean {
  return f.status === undefined && f.finishedBeforeMs === undefined;
}

/**
 * Does `row` pass `f`? A broken row (or one without runs) passes a status filter only with
 * `none`, and never a `finishedBefore` filter: its end is unknown.
 */
export function matchesFilter(row: FleetRow, f: RowFilter): boolean {
  if (f.status !== undefined) {
    const s = (row.lastStatus ?? "none") as StatusValue;
    if (!f.status.includes(s)) return false;
  }
  if (f.finishedBeforeMs !== undefined) {
    if (row.lastEndTime === null) return false;
    const t = Date.parse(row.lastEndTime);
    if (!Number.isFinite(t) || t >= f.finishedBeforeMs) return false;
  }
  return true;
}

function keyOf(row: FleetRow, c: SortColumn): string | number | null {
  switch (c) {
    case "path": return row.rel;
    case "kind": return row.kind;
    case "runs": return row.runs;
    case "status": return row.lastStatus;
    case "ended": return row.lastEndTime;
    case "cost": return row.totalCost;
    case "events": return row.events;
    case "bytes": return row.storedBytes;
    case "lock": return row.lock;
  }
}

/** Compare rows by `column` (unknown values last), then by path; `reverse` flips the column order only. */
export function compareRows(column: SortColumn, reverse = false): (a: FleetRow, b: FleetRow) => number {
  return (a, b) => {
    const x = keyOf(a, column);
    const y = keyOf(b, column);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x) < String(y) ? -1 : 1;
      if (c !== 0) return reverse ? -c : c;
    }
    return a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0;
  };
}
