/**
 * An independent, deliberately simple model of what a reader must yield for given journal bytes:
 * split on `\n` with a plain loop, decode with a fatal TextDecoder, JSON.parse everything. The
 * reader contract suite compares every JournalReader against it.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { layoutOf } from "@hankweave-journal/core";

export interface OracleLine {
  line: number;
  offset: number;
  bytes: Buffer;
  terminated: boolean;
}

export interface OracleEvent {
  line: number;
  offset: number;
  bytes: Buffer;
  event: { id: string; timestamp: string; type: string; data: unknown };
}

export interface OracleFinding {
  code: "CORRUPT_LINE" | "INVALID_UTF8" | "TORN_TAIL";
  line: number;
  byteOffset: number;
}

export interface Oracle {
  lines: OracleLine[];
  /** Each terminated, non-blank line with its parse outcome. */
  parsed: { line: OracleLine; event?: OracleEvent["event"]; finding?: OracleFinding }[];
  events: OracleEvent[];
  findings: OracleFinding[];
}

const fatal = new TextDecoder("utf-8", { fatal: true });
const CANONICAL_PREFIX = /^\{"id":"([^"\\\x00-\x1f]*)","timestamp":"([^"\\\x00-\x1f]*)","type":"([^"\\\x00-\x1f]*)"[,}]/;

/** The type the canonical-prefix rule sniffs from a line, or undefined. */
export function oracleSniff(bytes: Buffer): string | undefined {
  const m = CANONICAL_PREFIX.exec(bytes.toString("latin1"));
  return m ? Buffer.from(m[3], "latin1").toString("utf8") : undefined;
}

/** Compute what any reader must yield for `journal`. */
export function journalOracle(journal: Buffer): Oracle {
  const lines: OracleLine[] = [];
  let start = 0;
  for (let i = 0; i < journal.length; i++) {
    if (journal[i] === 10) {
      lines.push({ line: lines.length, offset: start, bytes: journal.subarray(start, i), terminated: true });
      start = i + 1;
    }
  }
  if (start < journal.length) lines.push({ line: lines.length, offset: start, bytes: journal.subarray(start), terminated: false });
  const parsed: Oracle["parsed"] = [];
  const events: OracleEvent[] = [];
  const findings: OracleFinding[] = [];
  for (const l of lines) {
    if (!l.terminated) {
      findings.push({ code: "TORN_TAIL", line: l.line, byteOffset: l.offset });
      continue;
    }
    if (/^[ \t\r]*$/.test(l.bytes.toString("latin1"))) continue;
    let text: string;
    try {
      text = fatal.decode(l.bytes);
    } catch {
      const finding: OracleFinding = { code: "INVALID_UTF8", line: l.line, byteOffset: l.offset };
      parsed.push({ line: l, finding });
      findings.push(finding);
      continue;
    }
    let v: any;
    try {
      v = JSON.parse(text);
    } catch {
      v = undefined;
    }
    const ok = v !== null && typeof v === "object" && !Array.isArray(v) && typeof v.id === "string" &&
      typeof v.timestamp === "string" && typeof v.type === "string" && Object.prototype.hasOwnProperty.call(v, "data");
    if (!ok) {
      const finding: OracleFinding = { code: "CORRUPT_LINE", line: l.line, byteOffset: l.offset };
      parsed.push({ line: l, finding });
      findings.push(finding);
      continue;
    }
    parsed.push({ line: l, event: v });
    events.push({ line: l.line, offset: l.offset, bytes: l.bytes, event: v });
  }
  return { lines, parsed, events, findings };
}

/** What `events({types})` must yield and report: lines sniffed to another type are skipped unparsed. */
export function oracleFiltered(o: Oracle, types: string[]): { events: OracleEvent[]; findings: OracleFinding[] } {
  const set = new Set(types);
  const events: OracleEvent[] = [];
  const findings: OracleFinding[] = [];
  for (const p of o.parsed) {
    const sniffed = oracleSniff(p.line.bytes);
    if (sniffed !== undefined && !set.has(sniffed)) continue;
    if (p.finding) findings.push(p.finding);
    else if (p.event && set.has(p.event.type)) events.push({ line: p.line.line, offset: p.line.offset, bytes: p.line.bytes, event: p.event });
  }
  const torn = o.findings.find((f) => f.code === "TORN_TAIL");
  if (torn) findings.push(torn);
  return { events, findings };
}

/**
 * Create a temp execution directory whose `events.jsonl` holds exactly `journal`.
 * @example const exec = makeExecWithJournal(Buffer.from('{"id":"1","timestamp":"t","type":"info","data":{}}\n'));
 */
export function makeExecWithJournal(journal: Buffer, prefix = "hwj-contract-"): string {
  const exec = mkdtempSync(`${tmpdir()}/${prefix}`);
  const l = layoutOf(exec);
  mkdirSync(l.eventsDir, { recursive: true });
  writeFileSync(l.journal, journal);
  return exec;
}
