/**
 * Torn-tail repair and sidecar rewrite as a pure-ish planner (reads only) plus a thin apply
 * (format §2.4, §2.5). Used by `hankweave-journal repair` and by the writer's open.
 *
 * No byte is ever lost: the fragment is copied to `events.jsonl.torn-<offset>` and fsynced
 * (with its directory) before the journal is truncated to its last newline.
 */
import { constants as FS } from "node:fs";
import * as fsp from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { JournalError, layoutOf, type Finding, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { assertRegularFile, assertTempUsable, fsyncDir, ioError, lstatOrUndefined, openNoFollow } from "./durable-file.js";
import { journalPresence, missingJournalError, openRegularForRead } from "./fs-checks.js";
import { isBlankLine, parseEventLine } from "./line-parse.js";
import { countNewlines, scanRawLines } from "./line-scanner.js";
import { EVENT_SCHEMA_VERSION, SIDECAR_SCHEMA_VERSION, readSidecarStatus, writeSidecar, type Sidecar, type SidecarStatus } from "./sidecar.js";

/** At most this many corrupt-line findings are kept in a plan (the counts stay exact). */
export const PLAN_MAX_FINDINGS = 100;
/** Names tried for a quarantine file at one offset (`torn-<offset>`, `.1`, … `.99`). */
const MAX_QUARANTINE_ATTEMPTS = 100;

/** What a repair would do. Plain data: print it for `--dry-run`. */
export interface RepairPlan {
  exec: string;
  journal: string;
  /** File size when planned; apply refuses (JOURNAL_CHANGED) if it differs. */
  fileBytes: number;
  /** The unterminated final fragment to quarantine, or null. */
  tornTail: { offset: number; length: number; quarantinePath: string } | null;
  /** Size after the repair (the offset just past the last `\n`). */
  truncateTo: number;
  /** Counts of the journal after the repair. */
  counts: { lines: number; events: number; blankLines: number; corruptLines: number; lastEventId: string | null };
  /** How the counts were obtained: the sidecar was trusted (whole or as a prefix) or a full rescan. */
  counted: "sidecar" | "sidecar-prefix" | "rescan";
  /** The sidecar as found, judged against the repaired size. */
  sidecarBefore: SidecarStatus;
  /** The sidecar to write, or null when the existing one is already exact. */
  sidecarAfter: Sidecar | null;
  /** Corrupt lines in the complete part: reported, never modified. */
  findings: Finding[];
  /** One human-readable line per action. Empty: nothing to do. */
  actions: string[];
}

/** Options of `planRepair`. */
export interface PlanRepairOptions {
  /** Trust a sidecar whose byteLength matches (or is a line-aligned prefix), as the writer does at open. Default false: full rescan. */
  trustSidecar?: boolean;
}

interface ScanCounts {
  events: number;
  lastEventId: string | null;
  blankLines: number;
  corruptLines: number;
  findings: Finding[];
  /** A file.updated with an inline `content` body (event schema v1) was seen. */
  sawInlineFileBody?: boolean;
}

/** Parse-count the complete lines in [start.offset, end). */
async function countEvents(fh: FileHandle, start: { offset: number; line: number }, end: number): Promise<ScanCounts> {
  const c: ScanCounts = { events: 0, lastEventId: null, blankLines: 0, corruptLines: 0, findings: [] };
  for await (const raw of scanRawLines(fh, start)) {
    if (raw.offset >= end || !raw.terminated) break;
    if (isBlankLine(raw.bytes)) {
      c.blankLines += 1;
      continue;
    }
    const parsed = parseEventLine(raw.bytes, raw.line, raw.offset);
    if (parsed.ok) {
      c.events += 1;
      c.lastEventId = parsed.event.id;
      if (parsed.event.type === "file.updated" && typeof (parsed.event.data as { content?: unknown } | null)?.content === "string") {
        c.sawInlineFileBody = true;
      }
    } else {
      c.corruptLines += 1;
      if (c.findings.length < PLAN_MAX_FINDINGS) c.findings.push(parsed.finding);
    }
  }
  return c;
}

async function byteAt(fh: FileHandle, offset: number): Promise<number | undefined> {
  const b = Buffer.alloc(1);
  const { bytesRead } = await fh.read(b, 0, 1, offset);
  return bytesRead === 1 ? b[0] : undefined;
}

/**
 * Plan the repair of `exec`'s journal: quarantine an unterminated final fragment, and rewrite the
 * sidecar when it is absent, invalid, stale or lying. Reads only; modifies nothing.
 *
 * @example const plan = await planRepair("/runs/x"); if (plan.actions.length) await applyRepair(plan);
 */
export async function planRepair(exec: ExecRef, opts: PlanRepairOptions = {}): Promise<RepairPlan> {
  const l = resolveExec(exec);
  const presence = await journalPresence(l);
  if (presence.kind !== "plain") throw missingJournalError(l, presence, true);
  const fh = await openRegularForRead(l.journal);
  try {
    const nl = await countNewlines(fh, 0);
    const fileBytes = nl.end;
    const truncateTo = nl.lastLineEnd;
    const tornTail = truncateTo < fileBytes
      ? { offset: truncateTo, length: fileBytes - truncateTo, quarantinePath: await chooseQuarantinePath(l, await readRange(fh, truncateTo, fileBytes - truncateTo), truncateTo) }
      : null;
    const sidecarBefore = await readSidecarStatus(l, truncateTo);
    let counted: RepairPlan["counted"] = "rescan";
    let scan: ScanCounts;
    const sc = sidecarBefore.status === "ok" || sidecarBefore.status === "stale" ? sidecarBefore.sidecar : undefined;
    const aligned = sc !== undefined && (sc.byteLength === 0 || (await byteAt(fh, sc.byteLength - 1)) === 10);
    if (opts.trustSidecar && sc && aligned) {
      if (sc.byteLength === truncateTo) {
        counted = "sidecar";
        scan = { events: sc.totalEvents, lastEventId: sc.lastEventId, blankLines: 0, corruptLines: 0, findings: [] };
      } else {
        counted = "sidecar-prefix";
        const prefixLines = (await countNewlinesUpTo(fh, sc.byteLength));
        const rest = await countEvents(fh, { offset: sc.byteLength, line: prefixLines }, truncateTo);
        scan = { ...rest, events: sc.totalEvents + rest.events, lastEventId: rest.lastEventId ?? sc.lastEventId };
      }
    } else {
      scan = await countEvents(fh, { offset: 0, line: 0 }, truncateTo);
    }
    const after: Sidecar = {
      schemaVersion: SIDECAR_SCHEMA_VERSION,
      // Without a sidecar, inline file.updated bodies mean the reference runtime's v1 event schema.
      eventSchemaVersion: sc?.eventSchemaVersion ?? (scan.sawInlineFileBody ? 1 : EVENT_SCHEMA_VERSION),
      totalEvents: scan.events,
      byteLength: truncateTo,
      lastEventId: scan.lastEventId,
    };
    const exact =
      sidecarBefore.status === "ok" &&
      sidecarBefore.sidecar.totalEvents === after.totalEvents &&
      sidecarBefore.sidecar.lastEventId === after.lastEventId;
    const actions: string[] = [];
    if (tornTail) {
      actions.push(`quarantine the ${tornTail.length}-byte torn tail at byte ${tornTail.offset} to ${tornTail.quarantinePath}`);
      actions.push(`truncate ${l.journal} from ${fileBytes} to ${truncateTo} bytes`);
    }
    if (!exact) actions.push(`write ${l.sidecar} (sidecar was ${sidecarBefore.status}): ${after.totalEvents} events, ${after.byteLength} bytes`);
    return {
      exec: l.exec,
      journal: l.journal,
      fileBytes,
      tornTail,
      truncateTo,
      counts: { lines: nl.newlines, events: scan.events, blankLines: scan.blankLines, corruptLines: scan.corruptLines, lastEventId: scan.lastEventId },
      counted,
      sidecarBefore,
      sidecarAfter: exact ? null : after,
      findings: scan.findings,
      actions,
    };
  } finally {
    await fh.close();
  }
}

async function readRange(fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(out, got, length - got, offset + got);
    if (bytesRead === 0) throw new JournalError("JOURNAL_CHANGED", "the journal shrank while it was read", { byteOffset: offset + got });
    got += bytesRead;
  }
  return out;
}

/** True when an existing quarantine file can take `fragment`: absent, identical, or a prefix left by a crash mid-copy. */
async function quarantineFits(path: string, fragment: Buffer): Promise<boolean> {
  let existing: Buffer;
  // lstat first: a link (or anything but a regular file) at the quarantine name does not fit, so the
  // plan takes the next name; it is never read or written through.
  const st = await lstatOrUndefined(path);
  if (st === undefined) return true;
  if (!st.isFile()) return false;
  try {
    existing = await fsp.readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return true;
    throw ioError(e, path);
  }
  return existing.length <= fragment.length && fragment.subarray(0, existing.length).equals(existing);
}

/** The quarantine path for a fragment torn at `offset`: `torn-<offset>`, or `torn-<offset>.<n>` when an earlier, different fragment holds that name. */
async function chooseQuarantinePath(l: ExecLayout, fragment: Buffer, offset: number): Promise<string> {
  for (let attempt = 0; attempt < MAX_QUARANTINE_ATTEMPTS; attempt++) {
    const path = l.tornFragment(offset, attempt);
    if (await quarantineFits(path, fragment)) return path;
  }
  throw new JournalError("TORN_FRAGMENT_CONFLICT", `${MAX_QUARANTINE_ATTEMPTS} different fragments are already quarantined at byte ${offset}`, {
    path: l.tornFragment(offset), byteOffset: offset,
  }, { hint: "move the old events.jsonl.torn-* files aside, then repair again" });
}

async function countNewlinesUpTo(fh: FileHandle, end: number): Promise<number> {
  let n = 0;
  for await (const raw of scanRawLines(fh, { offset: 0, line: 0 })) {
    if (raw.offset >= end) break;
    if (raw.terminated) n = raw.line + 1;
  }
  return n;
}

/** Copy `bytes` to the quarantine path (absent, or an identical file or a crash-left prefix of it) and fsync it. */
async function writeQuarantine(path: string, bytes: Buffer): Promise<void> {
  await assertRegularFile(path); // a link planted since the plan: SYMLINK_REFUSED
  if (!(await quarantineFits(path, bytes))) {
    throw new JournalError("TORN_FRAGMENT_CONFLICT", `${path} appeared with different bytes since the repair was planned`, {
      path, expected: bytes.length,
    }, { hint: "run repair again" });
  }
  // An existing prefix was left by a crash during an earlier copy: the journal still holds every byte.
  const fh = await openNoFollow(path, FS.O_RDWR | FS.O_CREAT);
  try {
    await fh.truncate(0);
    await fh.write(bytes, 0, bytes.length, 0);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** What `applyRepair` did. */
export interface RepairResult {
  plan: RepairPlan;
  quarantined: string | null;
  truncated: boolean;
  sidecarWritten: boolean;
}

/**
 * Execute a plan from `planRepair`. Refuses with JOURNAL_CHANGED when the journal's size or tail
 * differs from the plan. The caller holds the lock (the writer, or an offline tool's claim).
 */
export async function applyRepair(plan: RepairPlan): Promise<RepairResult> {
  const result: RepairResult = { plan, quarantined: null, truncated: false, sidecarWritten: false };
  const l = layoutOf(plan.exec);
  // Refuse before the journal is touched, not after its truncation: a directory at the sidecar temp.
  if (plan.sidecarAfter) await assertTempUsable(l.sidecarTmp);
  if (plan.tornTail) {
    // No-follow: a journal that is a symbolic link (to a file outside the execution) is refused.
    const fh = await openNoFollow(plan.journal, FS.O_RDWR);
    try {
      const st = await fh.stat();
      if (!st.isFile() || st.size !== plan.fileBytes) {
        throw new JournalError("JOURNAL_CHANGED", `${plan.journal} changed since the repair was planned`, {
          path: plan.journal, expected: plan.fileBytes, actual: st.size,
        });
      }
      const before = plan.truncateTo === 0 ? 10 : await byteAt(fh, plan.truncateTo - 1);
      if (before !== 10) throw new JournalError("JOURNAL_CHANGED", `byte ${plan.truncateTo - 1} is no longer a newline`, { path: plan.journal });
      const fragment = await readRange(fh, plan.tornTail.offset, plan.tornTail.length);
      await writeQuarantine(plan.tornTail.quarantinePath, fragment);
      await fsyncDir(l.eventsDir);
      result.quarantined = plan.tornTail.quarantinePath;
      // Only now, with the fragment durable elsewhere, may the journal lose it.
      await fh.truncate(plan.truncateTo);
      await fh.sync();
      result.truncated = true;
    } catch (e) {
      throw ioError(e, plan.journal);
    } finally {
      await fh.close();
    }
  }
  if (plan.sidecarAfter) {
    await writeSidecar(l, plan.sidecarAfter);
    result.sidecarWritten = true;
  }
  return result;
}
