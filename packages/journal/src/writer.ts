/**
 * The journal writer (format §2.4–2.5): one append-mode fd, appends serialized in submission order,
 * queued appends written as one buffer (group commit), durability `none | batch | every`, the
 * sidecar every 1,000 events and on close, torn-tail repair at open.
 */
import { constants as FS, writeSync } from "node:fs";
import * as fsp from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import { JournalError, layoutOf, type JournalEvent, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { buildLine, type NewEvent } from "./envelope.js";
import { assertRegularFile, ioError, openNoFollow, removeQuietly, resolveDurability, type Durability } from "./durable-file.js";
import { journalPresence, missingJournalError } from "./fs-checks.js";
import { applyRepair, planRepair, type RepairPlan, type RepairResult } from "./repair.js";
import { EVENT_SCHEMA_VERSION, SIDECAR_EVERY_EVENTS, SIDECAR_SCHEMA_VERSION, writeSidecar } from "./sidecar.js";

export type { NewEvent } from "./envelope.js";
export type { Durability } from "./durable-file.js";

/** At most this many lines per write(2) (format §2.4). */
export const MAX_BATCH_LINES = 10_000;
/** Writes up to this size are issued with writeSync (page-cache copy, no thread-pool hop). */
export const SYNC_WRITE_MAX_BYTES = 256 * 1024;
/** A batch also stops growing past this many bytes (it always holds at least one line). */
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

/** What an append returns once the line is written (and fsynced under `every`/`batch`). */
export interface AppendedEvent {
  line: number;
  offset: number;
  bytes: number;
  event: JournalEvent;
}

export interface WriterOptions {
  /** The durability policy (durable-file.ts); default DEFAULT_DURABILITY (`every`). */
  durability?: Durability;
  /** Injected clock (ms since epoch) for ids and timestamps; default Date.now. */
  now?: () => number;
  /** Injected randomness for ids; default Math.random. */
  random?: () => number;
}

/** What the writer found and fixed at open. */
export interface WriterOpenReport {
  /** The repair plan computed at open (counts, sidecar status, torn tail). */
  plan: RepairPlan;
  /** What was applied, or null when the journal and sidecar needed nothing. */
  repair: RepairResult | null;
  /** True when the journal file did not exist and was created empty. */
  created: boolean;
}

export interface JournalWriter {
  /** Resolves once the line is written (and fsynced when the policy says so): the acknowledged point. */
  append(event: NewEvent): Promise<AppendedEvent>;
  /** Validates all events first (none is written if one is invalid), then appends them in order. */
  appendMany(events: NewEvent[]): Promise<AppendedEvent[]>;
  /** Waits for queued appends, writes the sidecar, closes the fd. Idempotent. */
  close(): Promise<void>;
  readonly durability: Durability;
  readonly openReport: WriterOpenReport;
  /** Physical lines, bytes and parse-valid events as written so far. */
  position(): { lines: number; bytes: number; events: number; lastEventId: string | null };
  /** write(2) and fsync calls issued so far (group commit makes `syncs` far smaller than the event count under `batch`). */
  ioStats(): { writes: number; syncs: number; batches: number };
}

interface Pending {
  event: JournalEvent;
  bytes: Buffer;
  resolve: (a: AppendedEvent) => void;
  reject: (e: unknown) => void;
}

class Writer implements JournalWriter {
  private queue: Pending[] = [];
  private draining: Promise<void> | null = null;
  private closed = false;
  private failed: JournalError | null = null;
  private sinceSidecar = 0;
  private io = { writes: 0, syncs: 0, batches: 0 };
  private readonly ids: { now: () => number; random: () => number };

  constructor(
    private readonly layout: ExecLayout,
    private readonly fh: FileHandle,
    readonly durability: Durability,
    readonly openReport: WriterOpenReport,
    private lines: number,
    private bytes: number,
    private events: number,
    private lastEventId: string | null,
    private readonly eventSchemaVersion: number,
    opts: WriterOptions,
  ) {
    this.ids = { now: opts.now ?? Date.now, random: opts.random ?? Math.random };
  }

  position() {
    return { lines: this.lines, bytes: this.bytes, events: this.events, lastEventId: this.lastEventId };
  }

  ioStats() {
    return { ...this.io };
  }

  private refuse(): JournalError | null {
    if (this.closed) return new JournalError("JOURNAL_CLOSED", "the journal writer is closed", { path: this.layout.journal });
    if (this.failed) {
      return new JournalError("JOURNAL_WRITER_FAILED", `an earlier write failed: ${this.failed.message}`, { path: this.layout.journal }, {
        cause: this.failed, hint: "close this writer and open a new one (open repairs a torn tail)",
      });
    }
    return null;
  }

  append(e: NewEvent): Promise<AppendedEvent> {
    const refusal = this.refuse();
    if (refusal) return Promise.reject(refusal);
    let built: { event: JournalEvent; bytes: Buffer };
    try {
      built = buildLine(e, this.ids);
    } catch (err) {
      return Promise.reject(err);
    }
    const p = new Promise<AppendedEvent>((resolve, reject) => this.queue.push({ ...built, resolve, reject }));
    this.kick();
    return p;
  }

  appendMany(list: NewEvent[]): Promise<AppendedEvent[]> {
    const refusal = this.refuse();
    if (refusal) return Promise.reject(refusal);
    let built: { event: JournalEvent; bytes: Buffer }[];
    try {
      built = list.map((e) => buildLine(e, this.ids));
    } catch (err) {
      return Promise.reject(err);
    }
    const promises = built.map(
      (b) => new Promise<AppendedEvent>((resolve, reject) => this.queue.push({ ...b, resolve, reject })),
    );
    this.kick();
    return Promise.all(promises);
  }

  private kick(): void {
    if (this.draining) return;
    // Start on a microtask so appends issued in the same tick share one write (group commit).
    this.draining = Promise.resolve().then(() => this.drain()).finally(() => {
      this.draining = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  private takeBatch(): Pending[] {
    const maxLines = this.durability === "every" ? 1 : MAX_BATCH_LINES;
    let n = 0;
    let size = 0;
    while (n < this.queue.length && n < maxLines && (n === 0 || size + this.queue[n].bytes.length <= MAX_BATCH_BYTES)) {
      size += this.queue[n].bytes.length;
      n += 1;
    }
    return this.queue.splice(0, n);
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      if (this.failed) {
        for (const p of batch) p.reject(this.refuse());
        continue;
      }
      try {
        await this.writeBatch(batch);
      } catch (e) {
        this.failed = ioError(e, this.layout.journal);
        for (const p of batch) p.reject(this.failed);
      }
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const buf = batch.length === 1 ? batch[0].bytes : Buffer.concat(batch.map((p) => p.bytes));
    let off = 0;
    while (off < buf.length) {
      // Short writes are continued; the fd is O_APPEND so the position argument is not used.
      // Small writes go straight to the page cache synchronously (a few µs): a thread-pool round
      // trip per append measured 3–5× slower for one-at-a-time appends. Large ones stay async.
      const bytesWritten = buf.length - off <= SYNC_WRITE_MAX_BYTES
        ? writeSync(this.fh.fd, buf, off, buf.length - off, null)
        : (await this.fh.write(buf, off, buf.length - off, null)).bytesWritten;
      this.io.writes += 1;
      if (bytesWritten <= 0) throw new Error("write returned 0 bytes");
      off += bytesWritten;
    }
    if (this.durability !== "none") {
      await this.fh.datasync();
      this.io.syncs += 1;
    }
    this.io.batches += 1;
    const acks: [Pending, AppendedEvent][] = [];
    for (const p of batch) {
      acks.push([p, { line: this.lines, offset: this.bytes, bytes: p.bytes.length, event: p.event }]);
      this.lines += 1;
      this.bytes += p.bytes.length;
    }
    this.events += batch.length;
    this.lastEventId = batch[batch.length - 1].event.id;
    this.sinceSidecar += batch.length;
    // The sidecar is written before the acks so that an acknowledged 1,000th event is also counted there.
    if (this.sinceSidecar >= SIDECAR_EVERY_EVENTS) await this.writeSidecarNow();
    for (const [p, a] of acks) p.resolve(a);
  }

  private async writeSidecarNow(): Promise<void> {
    this.sinceSidecar = 0;
    // Advisory: a failed sidecar write is harmless (the next open recounts), so it is not an append failure.
    await writeSidecar(this.layout, {
      schemaVersion: SIDECAR_SCHEMA_VERSION,
      eventSchemaVersion: this.eventSchemaVersion,
      totalEvents: this.events,
      byteLength: this.bytes,
      lastEventId: this.lastEventId,
    }, { durability: this.durability }).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.draining) await this.draining;
    try {
      if (!this.failed) await this.writeSidecarNow();
    } finally {
      await this.fh.close();
    }
  }
}

/**
 * Open the journal of `exec` for appending (creating `.hankweave/events/events.jsonl` if absent).
 *
 * Guarantees: refuses a dieted directory (JOURNAL_DIETED, hint: restore first), a non-regular
 * journal (NOT_A_REGULAR_FILE) and a missing exec (EXEC_NOT_FOUND); repairs a torn tail without
 * losing a byte and rewrites a sidecar that had to be recounted (see `openReport`). Does not take
 * `runtime.lock`: the caller (the runtime) holds it.
 *
 * @example
 *   const w = await openJournalWriter("/runs/x", { durability: "batch" });
 *   const { line } = await w.append({ type: "info", data: { message: "hi" } });
 *   await w.close();
 */
export async function openJournalWriter(exec: ExecRef, opts: WriterOptions = {}): Promise<JournalWriter> {
  const durability = resolveDurability(opts.durability);
  const l = resolveExec(exec);
  const presence = await journalPresence(l);
  let created = false;
  if (presence.kind !== "plain") {
    if (presence.kind !== "none" || !presence.execExists) throw missingJournalError(l, presence, true);
    try {
      await fsp.mkdir(l.eventsDir, { recursive: true });
      const fh = await fsp.open(l.journal, "wx");
      await fh.close();
      created = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw ioError(e, l.journal);
    }
  }
  // lstat: a journal that is a symbolic link is refused (SYMLINK_REFUSED), never appended through.
  if ((await assertRegularFile(l.journal)) === undefined) throw missingJournalError(l, await journalPresence(l), true);
  // Sweep a sidecar temp left by a crash between its write and its rename (it is never trusted).
  await removeQuietly(l.sidecarTmp);
  const plan = await planRepair(l, { trustSidecar: true });
  const repair = plan.actions.length > 0 ? await applyRepair(plan) : null;
  const fh = await openNoFollow(l.journal, FS.O_WRONLY | FS.O_APPEND);
  const st = await fh.stat();
  if (!st.isFile() || st.size !== plan.truncateTo) {
    await fh.close();
    throw new JournalError("JOURNAL_CHANGED", `${l.journal} changed while the writer was opening`, {
      path: l.journal, expected: plan.truncateTo, actual: st.size,
    });
  }
  const esv = plan.sidecarAfter?.eventSchemaVersion ?? (plan.sidecarBefore.status === "ok" ? plan.sidecarBefore.sidecar.eventSchemaVersion : EVENT_SCHEMA_VERSION);
  return new Writer(l, fh, durability, { plan, repair, created }, plan.counts.lines, plan.truncateTo, plan.counts.events, plan.counts.lastEventId, esv, opts);
}
