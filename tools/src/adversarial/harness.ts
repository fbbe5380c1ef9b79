/**
 * The adversarial corpus harness: one case = a hostile execution (built by a deterministic setup
 * in a fresh temp root, beside an "outside" directory holding a sentinel file), one CLI command
 * run in-process through `runCli` with an in-memory io, and the invariants of issue 14:
 *
 * - the exit code is the expected one, and a non-zero exit names the expected stable code
 *   (`error CODE: …` on stderr, or the findings with their codes on stdout);
 * - no stack trace, no "internal error";
 * - no hang: the command settles within `CASE_TIMEOUT_MS`;
 * - every file inside and outside the execution is byte-identical afterwards (type, bytes, link
 *   target), except the paths the command is documented to change (`mayChange`);
 * - and then no journal line is lost: every complete line of the journal before is still a line of
 *   the journal after (plain or read through a diet) or of a quarantined torn fragment.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ERROR_CODES } from "@hankweave-journal/core";
import { AUDIT_CODES } from "@hankweave-journal/audit";
import { openReader } from "@hankweave-journal/diet";
import { memoryIO, runCli } from "@hankweave-journal/cli";

/** A command that has not settled after this long is a hang. */
export const CASE_TIMEOUT_MS = 30_000;

/** What a case's setup made: the argv to run (paths absolute) and the execution. */
export interface Prepared {
  argv: string[];
  exec: string;
}

/** One adversarial case. */
export interface AdversarialCase {
  /** Unique, kebab-case: `<family>/<variant>/<command>`. */
  name: string;
  family: string;
  /** Issue 14 class(es) the case belongs to (1 output paths … 7 exit codes; 0: none in particular). */
  classes: number[];
  /** The command under test (first argv word). */
  command: string;
  /** Build the execution under `root` (outside files go in `root/outside`); return the argv. */
  setup(root: string): Promise<Prepared> | Prepared;
  /** Allowed exit codes. */
  exit: number[];
  /** The stable code a non-zero exit must name (undefined: any code of ERROR_CODES/AUDIT_CODES). */
  code?: string;
  /** Paths (relative to root, regexes) the command is documented to change. */
  mayChange?: RegExp[];
}

/** What a path is: its type and bytes' hash, or its link target. */
type Entry = string;

/** Every path under `dir` (lstat, never following symlinks) with its type and content hash. */
export function snapshot(dir: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const walk = (abs: string, rel: string): void => {
    const st = fs.lstatSync(abs);
    if (st.isSymbolicLink()) out.set(rel, `link ${fs.readlinkSync(abs)}`);
    else if (st.isDirectory()) {
      out.set(rel, "dir");
      for (const name of fs.readdirSync(abs).sort()) walk(path.join(abs, name), rel === "" ? name : `${rel}/${name}`);
    } else if (st.isFile()) out.set(rel, `file ${st.size} ${createHash("sha256").update(fs.readFileSync(abs)).digest("hex")}`);
    else out.set(rel, st.isFIFO() ? "fifo" : st.isSocket() ? "socket" : "other");
  };
  walk(dir, "");
  return out;
}

/** Complete (`\n`-terminated) lines of `bytes`, as latin1 strings (byte-exact). */
function completeLines(bytes: Buffer): string[] {
  const s = bytes.toString("latin1");
  const parts = s.split("\n");
  parts.pop();
  return parts;
}

/** Every line the execution holds now: plain journal, diet (through the reader), torn fragments. */
async function linesNow(exec: string): Promise<string[]> {
  const events = path.join(exec, ".hankweave", "events");
  const lines: string[] = [];
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(events);
  } catch {
    return lines;
  }
  for (const name of entries) {
    const p = path.join(events, name);
    if (!fs.lstatSync(p).isFile()) continue;
    if (name.startsWith("events.jsonl.torn-")) lines.push(...fs.readFileSync(p).toString("latin1").split("\n").filter((l) => l.length > 0));
  }
  const journal = path.join(events, "events.jsonl");
  if (fs.existsSync(journal) && fs.lstatSync(journal).isFile()) lines.push(...completeLines(fs.readFileSync(journal)));
  else if (fs.existsSync(path.join(events, "events.jsonl.zst"))) {
    try {
      const r = await openReader(exec);
      try {
        for await (const l of r.lines()) if (l.terminated) lines.push(Buffer.from(l.bytes).toString("latin1"));
      } finally {
        await r.close();
      }
    } catch {
      // An unreadable diet holds no line we can count: the comparison below reports the loss.
    }
  }
  return lines;
}

/** Lines of `before` missing from `after` (as a multiset). */
function missingLines(before: string[], after: string[]): string[] {
  const have = new Map<string, number>();
  for (const l of after) have.set(l, (have.get(l) ?? 0) + 1);
  const missing: string[] = [];
  for (const l of before) {
    const n = have.get(l) ?? 0;
    if (n === 0) missing.push(l);
    else have.set(l, n - 1);
  }
  return missing;
}

const KNOWN_CODES = new Set<string>([...Object.keys(ERROR_CODES), ...Object.keys(AUDIT_CODES)]);
const STACK = /^\s+at .+(:\d+:\d+\)?|\(native\))$/m;

/** The outcome of one case, with every broken invariant named in `problems`. */
export interface CaseOutcome {
  name: string;
  exit: number | "hang";
  ms: number;
  stdout: string;
  stderr: string;
  problems: string[];
  /** Bytes of journal lines lost (must be 0). */
  bytesLost: number;
}

/** Run one case in a fresh temp root under `base` and check every invariant. */
export async function runCase(c: AdversarialCase, base: string): Promise<CaseOutcome> {
  const root = fs.mkdtempSync(path.join(base, "case-"));
  fs.mkdirSync(path.join(root, "outside"), { recursive: true });
  fs.writeFileSync(path.join(root, "outside", "sentinel.txt"), "outside the execution: must never change\n");
  const { argv, exec } = await c.setup(root);
  const journalPath = path.join(exec, ".hankweave", "events", "events.jsonl");
  let journalBefore: string[] = [];
  try {
    if (fs.lstatSync(journalPath).isFile()) journalBefore = completeLines(fs.readFileSync(journalPath));
  } catch {
    journalBefore = [];
  }
  if (journalBefore.length === 0) journalBefore = await linesNow(exec);
  const before = snapshot(root);
  const io = memoryIO({ cwd: root });
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([
    runCli(argv, io),
    new Promise<"hang">((resolve) => {
      timer = setTimeout(() => resolve("hang"), CASE_TIMEOUT_MS);
    }),
  ]);
  clearTimeout(timer);
  const ms = performance.now() - started;
  const stdout = io.out();
  const stderr = io.err();
  const problems: string[] = [];
  if (exit === "hang") problems.push(`no exit after ${CASE_TIMEOUT_MS} ms`);
  else if (!c.exit.includes(exit)) problems.push(`exit ${exit}, expected ${c.exit.join(" or ")}`);
  if (/internal error/.test(stderr) || STACK.test(stderr) || STACK.test(stdout)) problems.push("a stack trace or internal error was printed");
  if (exit !== 0 && exit !== "hang") {
    const coded = /^error ([A-Z][A-Z0-9_]+): /m.exec(stderr)?.[1];
    const listed = /^(?:error|warning)\s+([A-Z][A-Z0-9_]+)\b/m.exec(stdout)?.[1];
    const any = coded ?? listed;
    if (any === undefined || !KNOWN_CODES.has(any)) problems.push(`non-zero exit without a stable code (stderr: ${JSON.stringify(stderr.slice(0, 200))})`);
    if (c.code !== undefined && !new RegExp(`\\b${c.code}\\b`).test(stderr + stdout)) problems.push(`expected code ${c.code} (stderr: ${JSON.stringify(stderr.slice(0, 300))})`);
  }
  const after = snapshot(root);
  const allowed = (rel: string): boolean => (c.mayChange ?? []).some((re) => re.test(rel));
  for (const rel of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(rel) === after.get(rel) || allowed(rel)) continue;
    problems.push(`changed: ${rel === "" ? "." : rel} (${before.get(rel) ?? "absent"} → ${after.get(rel) ?? "absent"})`);
  }
  const lost = missingLines(journalBefore, await linesNow(exec));
  const bytesLost = lost.reduce((n, l) => n + Buffer.byteLength(l, "latin1") + 1, 0);
  if (lost.length > 0) problems.push(`${lost.length} journal line(s) lost (${bytesLost} bytes)`);
  fs.rmSync(root, { recursive: true, force: true });
  return { name: c.name, exit, ms, stdout, stderr, problems, bytesLost };
}

/** A temp base directory for a corpus run. */
export function corpusBase(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "hw-adversarial-"));
}
