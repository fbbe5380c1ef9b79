/**
 * Hostile journals (family `journals`): each variant is a function of the finished fixture's lines
 * returning the bytes to write as events.jsonl (or a setup that makes the journal path something
 * else). Deterministic; the biggest is a 4 MiB corrupt line.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { layoutOf } from "@hankweave-journal/core";
import { execWithJournal, finishedExec, finishedLines, joinLines } from "../executions.js";

/** One journal variant: how to make the execution, and the code the failing commands name. */
export interface JournalVariant {
  name: string;
  /** Build `root/exec`; returns the exec path. */
  make(root: string): string;
}

const lines = (): Buffer[] => finishedLines();
const mid = (l: Buffer[]): number => Math.floor(l.length / 2);
const withLine = (i: number, line: Buffer | string, replace = true): Buffer => {
  const l: (Buffer | string)[] = lines();
  l.splice(i, replace ? 1 : 0, line);
  return joinLines(l);
};

export const JOURNAL_VARIANTS: JournalVariant[] = [
  { name: "ok", make: (r) => finishedExec(r) },
  { name: "corrupt-middle", make: (r) => execWithJournal(r, withLine(mid(lines()), "{not json")) },
  { name: "torn-tail", make: (r) => { const b = joinLines(lines()); return execWithJournal(r, b.subarray(0, b.length - 40)); } },
  { name: "truncated-half", make: (r) => { const b = joinLines(lines()); return execWithJournal(r, b.subarray(0, Math.floor(b.length / 2))); } },
  { name: "bom", make: (r) => execWithJournal(r, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), joinLines(lines())])) },
  { name: "nul-line", make: (r) => execWithJournal(r, withLine(mid(lines()), Buffer.alloc(64, 0), false)) },
  { name: "nul-in-line", make: (r) => { const l = lines(); const m = Buffer.from(l[mid(l)]); m.fill(0, 10, 30); return execWithJournal(r, withLine(mid(l), m)); } },
  { name: "invalid-utf8", make: (r) => { const l = lines(); const m = Buffer.concat([l[3].subarray(0, l[3].length - 3), Buffer.from([0xff, 0xfe]), l[3].subarray(l[3].length - 3)]); return execWithJournal(r, withLine(3, m)); } },
  { name: "non-object-line", make: (r) => execWithJournal(r, withLine(mid(lines()), "[1,2,3]", false)) },
  { name: "string-line", make: (r) => execWithJournal(r, withLine(mid(lines()), '"just a string"', false)) },
  { name: "envelope-missing-data", make: (r) => execWithJournal(r, withLine(mid(lines()), '{"id":"x-1","timestamp":"2026-03-05T12:03:00.000Z","type":"info"}', false)) },
  { name: "empty", make: (r) => execWithJournal(r, Buffer.alloc(0)) },
  { name: "blank-lines-only", make: (r) => execWithJournal(r, "\n\n  \n\t\n") },
  { name: "crlf", make: (r) => execWithJournal(r, Buffer.from(joinLines(lines()).toString("latin1").replace(/\n/g, "\r\n"), "latin1")) },
  { name: "long-corrupt-line", make: (r) => execWithJournal(r, withLine(mid(lines()), "{" + "x".repeat(4 * 1024 * 1024), false)) },
  { name: "deep-nesting", make: (r) => execWithJournal(r, withLine(mid(lines()), `{"id":"d-1","timestamp":"2026-03-05T12:03:00.000Z","type":"info","data":${"[".repeat(100_000)}${"]".repeat(100_000)}}`, false)) },
  { name: "no-journal", make: (r) => { const e = execWithJournal(r, ""); fs.rmSync(layoutOf(e).journal); return e; } },
  { name: "no-hankweave", make: (r) => { const e = `${r}/exec`; fs.mkdirSync(e); return e; } },
  { name: "journal-is-directory", make: (r) => { const e = execWithJournal(r, ""); fs.rmSync(layoutOf(e).journal); fs.mkdirSync(layoutOf(e).journal); return e; } },
  { name: "journal-is-fifo", make: (r) => { const e = execWithJournal(r, ""); fs.rmSync(layoutOf(e).journal); execFileSync("mkfifo", [layoutOf(e).journal]); return e; } },
  { name: "sidecar-lying", make: (r) => { const e = finishedExec(r); fs.writeFileSync(layoutOf(e).sidecar, JSON.stringify({ schemaVersion: 1, eventSchemaVersion: 1, byteLength: 10_000_000, totalEvents: 99999, lastEventId: "nope", updatedAt: "2026-03-05T12:00:00.000Z" })); return e; } },
  { name: "sidecar-malformed", make: (r) => { const e = finishedExec(r); fs.writeFileSync(layoutOf(e).sidecar, "{not json"); return e; } },
  { name: "state-corrupt", make: (r) => { const e = finishedExec(r); fs.writeFileSync(layoutOf(e).state, "{\"runs\": [oops"); return e; } },
];
