/**
 * `hankweave-journal stats <exec>`: one streaming pass over the journal: lines, events by type and
 * category, bytes, blank and corrupt lines, torn tail, sidecar status. Read-only.
 */
import { categoryOf, resolveExec, type ExecRef, type Finding, type RawLine } from "@hankweave-journal/core";
import { severityOf } from "@hankweave-journal/audit";
import { openReader } from "@hankweave-journal/diet";
import { eventsFromRawLines, isBlankLine, readSidecarStatus, type Sidecar } from "@hankweave-journal/journal";
import { parseCommandArgs } from "../args.js";
import { escapeTerminalText } from "../terminal-text.js";
import { printErrorFindings } from "../finding-lines.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface StatsArgs {
  exec: string;
  json: boolean;
}

/** Findings listed in the output; the counts stay exact beyond this. */
const MAX_LISTED_FINDINGS = 100;

/** The `--json` object of `stats` (stable; consumers ignore unknown fields). */
export interface JournalStats {
  ok: boolean;
  exec: string;
  journal: string;
  kind: "plain" | "dieted";
  bytes: number;
  storedBytes: number;
  lines: number;
  blankLines: number;
  corruptLines: number;
  events: number;
  eventsByType: Record<string, number>;
  eventsByCategory: Record<string, number>;
  tornTail: { offset: number; length: number } | null;
  sidecar: {
    status: "absent" | "ok" | "stale" | "lying" | "invalid" | "not-applicable";
    claims: Sidecar | null;
    reason: string | null;
  };
  findings: { code: string; severity: string; line: number | null; byteOffset: number | null; message: string }[];
}

/** Compute the stats of `exec`'s journal in one pass. */
export async function journalStats(execRef: ExecRef): Promise<JournalStats> {
  const layout = resolveExec(execRef);
  const exec = layout.exec;
  const reader = await openReader(layout);
  try {
    const info = await reader.info();
    const s: JournalStats = {
      ok: true, exec, journal: layout.journal, kind: info.kind, bytes: info.bytes, storedBytes: info.storedBytes,
      lines: 0, blankLines: 0, corruptLines: 0, events: 0, eventsByType: Object.create(null) as Record<string, number>, eventsByCategory: Object.create(null) as Record<string, number>, tornTail: null,
      sidecar: { status: "not-applicable", claims: null, reason: null }, findings: [],
    };
    let lastEventId: string | null = null;
    const counted = async function* (src: AsyncIterable<RawLine>): AsyncGenerator<RawLine> {
      for await (const l of src) {
        if (l.terminated) {
          s.lines += 1;
          if (isBlankLine(l.bytes)) s.blankLines += 1;
        }
        yield l;
      }
    };
    const onFinding = (f: Finding): void => {
      if (f.code === "TORN_TAIL") s.tornTail = { offset: f.byteOffset ?? 0, length: Number(f.details?.length ?? 0) };
      else s.corruptLines += 1;
      if (s.findings.length < MAX_LISTED_FINDINGS) {
        s.findings.push({ code: f.code, severity: f.severity, line: f.line ?? null, byteOffset: f.byteOffset ?? null, message: f.message });
      }
    };
    for await (const rec of eventsFromRawLines(counted(reader.lines()), { onFinding })) {
      s.events += 1;
      const t = rec.event.type;
      s.eventsByType[t] = (s.eventsByType[t] ?? 0) + 1;
      const c = categoryOf(t);
      s.eventsByCategory[c] = (s.eventsByCategory[c] ?? 0) + 1;
      lastEventId = rec.event.id;
    }
    if (info.kind === "plain") {
      const complete = s.tornTail ? s.tornTail.offset : s.bytes;
      const sc = await readSidecarStatus(layout, s.bytes);
      if (sc.status === "absent") s.sidecar = { status: "absent", claims: null, reason: null };
      else if (sc.status === "invalid") s.sidecar = { status: "invalid", claims: null, reason: sc.reason };
      else {
        const c = sc.sidecar;
        // Judge against the full scan: the journal always wins.
        const lying = c.byteLength > complete ||
          (c.byteLength === complete && (c.totalEvents !== s.events || c.lastEventId !== lastEventId));
        const status = lying ? "lying" : c.byteLength === complete ? "ok" : "stale";
        s.sidecar = {
          status, claims: c,
          reason: lying ? `claims ${c.totalEvents} events / ${c.byteLength} bytes; the journal has ${s.events} / ${complete}` : null,
        };
      }
    }
    const note = (code: string, severity: string, message: string): void => {
      s.findings.push({ code, severity, line: null, byteOffset: null, message });
    };
    if (s.bytes === 0) note("EMPTY_JOURNAL", "info", "the journal file is empty");
    // One severity per code: the one verify gives (the audit package's table).
    if (s.sidecar.status === "invalid") note("SIDECAR_INVALID", severityOf("SIDECAR_INVALID"), `events.meta.json is invalid: ${s.sidecar.reason}`);
    if (s.sidecar.status === "lying") note("SIDECAR_MISMATCH", severityOf("SIDECAR_MISMATCH"), `events.meta.json ${s.sidecar.reason}`);
    s.ok = s.corruptLines === 0 && s.tornTail === null;
    return s;
  } finally {
    await reader.close();
  }
}

function render(s: JournalStats): string {
  const out: string[] = [];
  out.push(`journal      ${s.journal} (${s.kind})`);
  out.push(`bytes        ${s.bytes}${s.storedBytes !== s.bytes ? ` (stored ${s.storedBytes})` : ""}`);
  out.push(`lines        ${s.lines} (blank ${s.blankLines}, corrupt ${s.corruptLines})`);
  out.push(`events       ${s.events}`);
  out.push(`torn tail    ${s.tornTail ? `${s.tornTail.length} bytes at byte ${s.tornTail.offset}` : "none"}`);
  const c = s.sidecar.claims;
  out.push(`sidecar      ${s.sidecar.status}${c ? ` (claims ${c.totalEvents} events, ${c.byteLength} bytes, last ${c.lastEventId ?? "null"})` : ""}${s.sidecar.reason && !c ? `: ${s.sidecar.reason}` : ""}`);
  out.push("by category");
  for (const [k, v] of Object.entries(s.eventsByCategory).sort((a, b) => b[1] - a[1])) out.push(`  ${k.padEnd(22)} ${v}`);
  out.push("by type");
  for (const [k, v] of Object.entries(s.eventsByType).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) out.push(`  ${k.padEnd(28)} ${v}`);
  if (s.findings.length > 0) {
    out.push("findings");
    for (const f of s.findings) out.push(`  ${f.severity} ${f.code} line ${f.line} byte ${f.byteOffset}: ${f.message}`);
  }
  return out.join("\n") + "\n";
}

export const statsCommand: Command<StatsArgs> = {
  name: "stats",
  summary: "count lines, events by type and category, corrupt lines, torn tail, sidecar status",
  help: `usage: hankweave-journal stats <exec> [--json]

One read-only pass over the journal (plain or dieted). Reports bytes, physical lines, blank and
corrupt lines, events by type and by category, a torn tail, and the sidecar's status:
absent | ok | stale (vouches for a prefix) | lying (claims more bytes, or other counts) | invalid.

  --json   print one stable JSON object

Examples:
  hankweave-journal stats ./runs/x
  hankweave-journal stats ./runs/x --json | jq .eventsByType

Exit codes: 0 clean, 1 corrupt lines or a torn tail (or an error), 2 usage.`,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], json: p.values.json === true };
  },
  async run(args, io, ctx) {
    const s = await journalStats(execLayout(ctx));
    await io.stdout(args.json ? JSON.stringify(s) + "\n" : escapeTerminalText(render(s)));
    if (s.ok) return 0;
    // What made it fail (corrupt lines, a torn tail), with codes, on stderr in both modes.
    printErrorFindings(io, s.findings.map((f) => ({
      code: f.code, severity: f.severity === "error" || f.code === "TORN_TAIL" ? "error" : "warning", message: f.message, ...(f.line !== null ? { line: f.line } : {}),
    })));
    return 1;
  },
};
