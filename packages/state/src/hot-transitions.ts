/**
 * The hot `state.transition` lines of a rebuild, read without JSON.parse.
 *
 * Nearly all transitions of a real journal are CostsIncremented and AssistantMessageCountUpdated,
 * written by the runtime (and by our engine) with the same keys in the same order. A line that is
 * byte for byte such a template, every string plain printable ASCII (no escape, no control
 * character, no byte ≥ 0x80) and every number in JSON's grammar, is valid UTF-8 and valid JSON
 * without duplicate keys or whitespace, and a valid envelope: JSON.parse would give exactly the
 * object the template describes. Anything else (another key order, whitespace, an escape, a
 * non-ASCII byte, any other shape) does not match and takes the full parse.
 *
 * Measured reason: JSON.parse of these lines was ~30% of a rebuild, mostly V8's slow path for
 * 16–17 digit doubles (`totalCost`, `currentRunCost` of `resultingState`, which a fold recomputes
 * and never reads). Here they are checked against the grammar only, and only what the fold reads
 * (the transition and the line timestamp) is built. Numbers that are built are exact (see
 * `readNumber`).
 */
import type { JournalEvent, StateTransition } from "@hankweave-journal/core";

/** What a template hole accepts, and whether the fold needs its value. */
const Hole = {
  /** A string the fold does not read: validated only. */
  SkipString: 0,
  /** A string the fold reads, new on every line (the timestamp). */
  String: 1,
  /** A string the fold reads that repeats on consecutive lines (run and codon ids): decoded once. */
  RepeatedString: 2,
  /** A number the fold reads. */
  Number: 3,
  /** A number the fold does not read: validated only. */
  SkipNumber: 4,
  /** A string or null the fold does not read: validated only. */
  SkipStringOrNull: 5,
} as const;
type Hole = (typeof Hole)[keyof typeof Hole];

/** A line shape: literal byte runs around typed holes. */
interface LineTemplate {
  /** `lits[i]` precedes hole i; the last one ends the line. */
  lits: Uint8Array[];
  holes: Hole[];
  /** The whole event from all hole values (tests compare it with JSON.parse). */
  event: (v: unknown[]) => JournalEvent;
  /** The `data.transition` object from the hole values the fold reads. */
  transition: (v: unknown[]) => StateTransition;
  /** Index of the timestamp hole. */
  timestampHole: number;
}

/**
 * Derive the literal runs from `event` itself (holes replaced by marker strings), so the template
 * and the object it stands for cannot disagree.
 */
function lineTemplate(holes: Hole[], event: LineTemplate["event"], transition: LineTemplate["transition"]): LineTemplate {
  const text = JSON.stringify(event(holes.map((_, i) => `\u0001${i}\u0001`)));
  const parts = text.split(/"\\u0001(\d+)\\u0001"/);
  const lits: Uint8Array[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    if (i > 0 && Number(parts[i - 1]) !== i / 2 - 1) throw new Error("template holes out of order");
    lits.push(Buffer.from(parts[i], "latin1"));
  }
  if (lits.length !== holes.length + 1) throw new Error("template hole missing");
  return { lits, holes, event, transition, timestampHole: holes.indexOf(Hole.String) };
}

const { SkipString: I, String: T, RepeatedString: R, Number: N, SkipNumber: V, SkipStringOrNull: Z } = Hole;

const TEMPLATES: readonly LineTemplate[] = [
  lineTemplate(
    [I, T, I, I, R, R, N, N, N, N, N, Z, V, V, V],
    (v) => ({
      id: v[0] as string, timestamp: v[1] as string, type: "state.transition",
      data: {
        transitionType: "CostsIncremented", runId: v[2], codonId: v[3],
        transition: {
          type: "CostsIncremented",
          data: {
            runId: v[4], codonId: v[5], costDelta: v[6],
            tokensDelta: { inputTokens: v[7], outputTokens: v[8], cacheCreationTokens: v[9], cacheReadTokens: v[10] },
          },
        },
        resultingState: { currentRunId: v[11], runCount: v[12], totalCost: v[13], currentRunCost: v[14] },
      },
    }),
    (v) => ({
      type: "CostsIncremented",
      data: {
        runId: v[4] as string, codonId: v[5] as string, costDelta: v[6] as number,
        tokensDelta: {
          inputTokens: v[7] as number, outputTokens: v[8] as number, cacheCreationTokens: v[9] as number, cacheReadTokens: v[10] as number,
        },
      },
    }),
  ),
  lineTemplate(
    [I, T, I, I, R, R, N, Z, V, V, V],
    (v) => ({
      id: v[0] as string, timestamp: v[1] as string, type: "state.transition",
      data: {
        transitionType: "AssistantMessageCountUpdated", runId: v[2], codonId: v[3],
        transition: { type: "AssistantMessageCountUpdated", data: { runId: v[4], codonId: v[5], newCount: v[6] } },
        resultingState: { currentRunId: v[7], runCount: v[8], totalCost: v[9], currentRunCost: v[10] },
      },
    }),
    (v) => ({ type: "AssistantMessageCountUpdated", data: { runId: v[4] as string, codonId: v[5] as string, newCount: v[6] as number } }),
  ),
];

/** A JSON string without escapes, control characters or non-ASCII (the line is decoded as latin1). */
const PLAIN_STRING = '"([ !#-\\[\\]-\\x7f]*)"';
/** JSON's number grammar, exactly. */
const NUMBER = "(-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)";

/** The regular expression of a template; `all` captures every hole, else only the values the fold reads. */
function templateRegExp(tp: LineTemplate, all: boolean): RegExp {
  let src = "^";
  for (let h = 0; h <= tp.holes.length; h++) {
    src += latin1Of(tp.lits[h]).replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
    if (h === tp.holes.length) break;
    const kind = tp.holes[h];
    const capture = all || kind === Hole.String || kind === Hole.RepeatedString || kind === Hole.Number;
    const group = (re: string): string => (capture ? re : re.replace("(", "(?:"));
    if (kind === Hole.Number || kind === Hole.SkipNumber) src += group(NUMBER);
    else if (kind === Hole.SkipStringOrNull) src += `(?:${group(PLAIN_STRING)}|null)`;
    else src += group(PLAIN_STRING);
  }
  return new RegExp(src + "$");
}

function latin1Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("latin1");
}

/** 10^0 … 10^22: exactly representable doubles. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
const TWO_53 = 2 ** 53;

/**
 * The value of `text`, a JSON number (already checked against the grammar), as JSON.parse gives
 * it. A mantissa below 2^53 with at most 22 fraction digits and no exponent is one IEEE division
 * by an exact power of ten (correctly rounded: bit-identical to JSON.parse, without V8's slow path
 * for 16–17 digit doubles); anything else is `Number(text)`, the same correctly rounded conversion.
 */
export function jsonNumber(text: string): number {
  const len = text.length;
  let i = 0;
  const neg = text.charCodeAt(0) === 0x2d;
  if (neg) i = 1;
  let m = 0;
  let frac = -1;
  for (; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      frac = len - i - 1;
      continue;
    }
    if (c < 0x30 || c > 0x39) return Number(text); // an exponent
    m = m * 10 + (c - 0x30);
  }
  if (m >= TWO_53 || frac > 22) return Number(text);
  const v = frac <= 0 ? m : m / POW10[frac];
  return neg ? -v : v;
}

const TRANSITION_TYPE_KEY = '"transitionType":"';

interface CompiledTemplate {
  tp: LineTemplate;
  /** The transition type the template stands for. */
  name: string;
  /** Captures the values the fold reads, in hole order. */
  fold: RegExp;
  /** Hole index of each capture of `fold`. */
  foldHoles: number[];
  /** Captures every hole. */
  full: RegExp;
}

const COMPILED: readonly CompiledTemplate[] = TEMPLATES.map((tp) => ({
  tp,
  name: tp.transition(tp.holes.map(() => 0)).type,
  fold: templateRegExp(tp, false),
  foldHoles: tp.holes.flatMap((k, h) => (k === Hole.String || k === Hole.RepeatedString || k === Hole.Number ? [h] : [])),
  full: templateRegExp(tp, true),
}));

/** The value of hole `h` from its capture. */
function holeValue(kind: Hole, capture: string | undefined): unknown {
  if (capture === undefined) return null; // the `null` branch of a string-or-null hole
  return kind === Hole.Number || kind === Hole.SkipNumber ? jsonNumber(capture) : capture;
}

/**
 * Matches lines against the hot templates (one latin1 decode and one regular expression per
 * line: measured ~4× faster than a byte loop in JS here). Not thread-safe (one per fold).
 */
export class HotTransitionParser {
  /** The line timestamp of the latest successful `match`. */
  timestamp = "";
  private readonly values: unknown[] = [];

  /**
   * The `data.transition` of the line `b[start, end)` when it is a hot template (timestamp in
   * `this.timestamp`), else undefined: parse the line as usual. When defined, it deep-equals
   * `JSON.parse(line).data.transition`, and the line is valid UTF-8, JSON and envelope.
   */
  match(b: Buffer, start: number, end: number): StateTransition | undefined {
    const line = latin1(b, start, end);
    // Try first the template whose transitionType the line names (the regular expression then
    // checks everything; this only saves a failing attempt).
    const at = line.indexOf(TRANSITION_TYPE_KEY) + TRANSITION_TYPE_KEY.length;
    const first = at >= TRANSITION_TYPE_KEY.length && line.startsWith(COMPILED[1].name, at) ? 1 : 0;
    for (let n = 0; n < COMPILED.length; n++) {
      const c = COMPILED[n === 0 ? first : n === first ? 0 : n];
      const m = c.fold.exec(line);
      if (m === null) continue;
      const v = this.values;
      const holes = c.foldHoles;
      for (let j = 0; j < holes.length; j++) {
        const h = holes[j];
        v[h] = holeValue(c.tp.holes[h], m[j + 1]);
      }
      this.timestamp = v[c.tp.timestampHole] as string;
      return c.tp.transition(v);
    }
    return undefined;
  }

  /**
   * The whole event when the line is a hot template (every hole decoded), else undefined; when
   * defined it deep-equals `JSON.parse` of the line (tests; the audit index folds it).
   */
  matchEvent(b: Buffer, start: number, end: number): JournalEvent | undefined {
    const line = latin1(b, start, end);
    for (const c of COMPILED) {
      const m = c.full.exec(line);
      if (m === null) continue;
      return c.tp.event(c.tp.holes.map((kind, h) => holeValue(kind, m[h + 1])));
    }
    return undefined;
  }
}

/** Node's latin1 decoder without `toString`'s argument handling. */
function latin1(b: Buffer, start: number, end: number): string {
  return (b as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(start, end);
}
