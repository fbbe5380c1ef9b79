/**
 * `hankweave-journal cat <exec>`: the journal's events as JSONL on stdout, byte for byte as stored
 * (never re-serialised), with filters and `--follow` for a live journal.
 */
import { JournalError, type Finding, type JournalEvent, type RawLine } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { eventsFromRawLines } from "@hankweave-journal/journal";
import { FILTER_OPTIONS, filterFlags, intFlag, parseCommandArgs } from "../args.js";
import { findingLine } from "../finding-lines.js";
import type { Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface CatArgs {
  exec: string;
  types: string[];
  run?: string;
  codon?: string;
  fromLine?: number;
  toLine?: number;
  follow: boolean;
  pollMs: number;
}

/** Output is flushed to stdout in chunks of about this many bytes. */
const OUT_CHUNK_BYTES = 256 * 1024;
const DEFAULT_POLL_MS = 250;

/** The run id an event refers to: `data.runId`, else `data.transition.data.runId`. */
export function eventRunId(e: JournalEvent): string | undefined {
  return refField(e, "runId");
}

/** The codon id an event refers to: `data.codonId`, else `data.transition.data.codonId`. */
export function eventCodonId(e: JournalEvent): string | undefined {
  return refField(e, "codonId");
}

function refField(e: JournalEvent, key: "runId" | "codonId"): string | undefined {
  const d = e.data as Record<string, any> | null;
  if (d === null || typeof d !== "object") return undefined;
  if (typeof d[key] === "string") return d[key];
  const inner = d.transition?.data;
  if (inner && typeof inner === "object" && typeof inner[key] === "string") return inner[key];
  return undefined;
}

function formatFinding(f: Finding): string {
  return findingLine(f);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

export const catCommand: Command<CatArgs> = {
  name: "cat",
  summary: "print the journal's events as JSONL (original bytes), with filters and --follow",
  help: `usage: hankweave-journal cat <exec> [--type T]... [--run R] [--codon C] [--from-line N] [--to-line N] [--follow]

Prints each event line exactly as stored in events.jsonl (or rehydrated from a dieted journal),
one per line. Blank lines are skipped; corrupt lines and a torn tail are reported on stderr.

  --type T        only events of type T (repeatable)
  --run R         only events whose data.runId (or data.transition.data.runId) is R
  --codon C       only events whose data.codonId (or data.transition.data.codonId) is C
  --from-line N   start at physical line N (from 0)
  --to-line N     stop after physical line N (inclusive)
  --follow        keep printing new lines as the journal grows (until interrupted)

Examples:
  hankweave-journal cat ./runs/x --type codon.completed --type error
  hankweave-journal cat ./runs/x --run run-2 --codon plan#0 | jq .data
  hankweave-journal cat ./runs/x --from-line 100 --to-line 200
  hankweave-journal cat ./runs/x --follow --poll-ms 500

Exit codes: 0 ok, 1 corrupt lines were found (or an error), 2 usage.`,

  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      type: { type: "string", multiple: true },
      ...FILTER_OPTIONS,
      follow: { type: "boolean", short: "f" },
      "poll-ms": { type: "string" },
    }, { min: 1, max: 1 });
    const args: CatArgs = {
      exec: p.positionals[0],
      types: (p.values.type as string[] | undefined) ?? [],
      follow: p.values.follow === true,
      pollMs: intFlag(p.values["poll-ms"], "--poll-ms") ?? DEFAULT_POLL_MS,
    };
    return { ...args, ...filterFlags(p.values) };
  },

  async run(args, io, ctx) {
    const layout = execLayout(ctx);
    const reader = await openReader(layout);
    let errors = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async (): Promise<void> => {
      if (pendingBytes === 0) return;
      const chunk = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await io.stdout(chunk);
    };
    // Lines up to `next` (exclusive) are done; a torn tail is retried on the next poll under --follow.
    let next = args.fromLine ?? 0;
    let nextOffset = 0;
    const to = args.toLine;
    const pass = async (final: boolean): Promise<void> => {
      const tracked = async function* (src: AsyncIterable<RawLine>): AsyncGenerator<RawLine> {
        for await (const l of src) {
          if (l.terminated) {
            next = l.line + 1;
            nextOffset = l.offset + l.bytes.length + 1;
          }
          yield l;
        }
      };
      const onFinding = (f: Finding): void => {
        if (f.code === "TORN_TAIL" && !final) return;
        if (f.severity === "error") errors += 1;
        io.stderr(formatFinding(f));
      };
      const opts = args.types.length > 0 ? { types: args.types, onFinding } : { onFinding };
      const lines = tracked(reader.lines({ fromLine: next, ...(to !== undefined ? { toLine: to } : {}) }));
      for await (const rec of eventsFromRawLines(lines, opts)) {
        if (args.run !== undefined && eventRunId(rec.event) !== args.run) continue;
        if (args.codon !== undefined && eventCodonId(rec.event) !== args.codon) continue;
        pending.push(Buffer.from(rec.bytes), Buffer.from("\n"));
        pendingBytes += rec.bytes.length + 1;
        if (pendingBytes >= OUT_CHUNK_BYTES) await flush();
        if (io.signal.aborted) break;
      }
      await flush();
    };
    try {
      if (!args.follow) {
        await pass(true);
      } else {
        let lastSize = -1;
        while (!io.signal.aborted && (to === undefined || next <= to)) {
          const size = (await reader.info()).bytes;
          if (size !== lastSize) {
            // A shrink down to the end of what we printed is a writer quarantining a torn tail: fine.
            if (size < nextOffset) throw new JournalError("JOURNAL_CHANGED", `the journal shrank from ${lastSize} to ${size} bytes while following`, { path: layout.exec });
            lastSize = size;
            await pass(false);
          }
          if (to !== undefined && next > to) break;
          await sleep(args.pollMs, io.signal);
        }
      }
    } finally {
      await reader.close();
    }
    return errors > 0 ? 1 : 0;
  },
};
