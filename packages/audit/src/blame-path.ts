/**
 * Paths into the folded state for `blame`, in two spellings (docs/explain.md):
 *
 * - **index form**, exactly as in state.json: `currentRunId`, `runs[1].status`,
 *   `runs[0].codons[3].finalCost`, `runs[0].codons[3].finalTokens.inputTokens`,
 *   `executionPlan[2].codonId`, `initialCheckpoint`. `runs[0]` is the newest run (state.json order).
 * - **friendly form**, by id: `run:<runId>.status`, `run:<runId>/codon:<codonId>.finalCost` (the
 *   latest attempt of that codon), `run:<runId>/codon:<codonId>@2.finalCost` (its 2nd attempt,
 *   counted from 1 as `summary` does). A loop iteration's `#n` is part of the codon id
 *   (`codon:implement#2`), so the attempt selector is `@n`, never `#n`.
 *
 * Parsing is pure; resolution to concrete indexes happens against the final state.
 */
import { JournalError } from "@hankweave-journal/core";

/** One step below the run or record (a key or an array index). */
export type Segment = string | number;

/** How a path names its run. */
export type RunSelector = { by: "index"; index: number } | { by: "id"; runId: string };

/** How a path names a codon record inside its run. */
export type CodonSelector = { by: "index"; index: number } | { by: "id"; codonId: string; attempt: number | null };

/** A parsed path. `rest` is what follows the run (or record, when `codon` is set). */
export type BlamePath =
  | { scope: "top"; rest: Segment[]; text: string }
  | { scope: "run"; run: RunSelector; codon: CodonSelector | null; rest: Segment[]; text: string };

const TOP_KEYS = new Set(["currentRunId", "executionPlan", "initialCheckpoint"]);

function bad(text: string, why: string): JournalError {
  return new JournalError("BLAME_PATH_INVALID", `path ${JSON.stringify(text)}: ${why}`, { actual: text }, {
    hint: "examples: currentRunId, runs[0].status, runs[0].codons[3].finalCost, run:<runId>/codon:<codonId>@2.finalCost",
  });
}

/** `a.b[3].c` → ["a", "b", 3, "c"]. */
function segments(text: string, s: string): Segment[] {
  const out: Segment[] = [];
  const re = /\.?([A-Za-z_$][\w$]*)|\[(\d+)\]/gy;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (m === null || m[0].length === 0) throw bad(text, `cannot read ${JSON.stringify(s.slice(pos))}`);
    if (m[0].startsWith(".") && out.length === 0 && pos === 0) throw bad(text, "a path cannot start with '.'");
    out.push(m[1] !== undefined ? m[1] : Number(m[2]));
    pos = re.lastIndex;
  }
  return out;
}

/**
 * Parse a blame path (either form). Throws JournalError BLAME_PATH_INVALID.
 * @example parseBlamePath("runs[0].codons[3].finalCost") // {scope: "run", run: {by: "index", index: 0}, codon: {by: "index", index: 3}, rest: ["finalCost"]}
 */
export function parseBlamePath(text: string): BlamePath {
  if (text.length === 0) throw bad(text, "empty");
  if (text.startsWith("run:")) return parseFriendly(text);
  const seg = segments(text, text);
  const head = seg[0];
  if (head === "runs") {
    if (typeof seg[1] !== "number") throw bad(text, "runs needs an index: runs[0] is the newest run");
    const run: RunSelector = { by: "index", index: seg[1] };
    if (seg[2] === "codons") {
      if (typeof seg[3] !== "number") throw bad(text, "codons needs an index: codons[0] is the run's first attempt");
      return { scope: "run", run, codon: { by: "index", index: seg[3] }, rest: seg.slice(4), text };
    }
    return { scope: "run", run, codon: null, rest: seg.slice(2), text };
  }
  if (typeof head !== "string" || !TOP_KEYS.has(head)) {
    throw bad(text, `unknown top-level key ${JSON.stringify(head)} (state keys: runs, currentRunId, executionPlan, initialCheckpoint)`);
  }
  return { scope: "top", rest: seg, text };
}

function parseFriendly(text: string): BlamePath {
  // run:<runId>[/codon:<codonId>[@n]][.field...]; ids may hold anything but '/', and a codon id
  // ends at '@' or at the first '.' followed by a field name.
  const m = /^run:([^/.]+)(?:\/codon:([^/@]+?)(?:@(\d+))?)?((?:\.[A-Za-z_$][\w$]*|\[\d+\])*)$/.exec(text);
  if (m === null) throw bad(text, "friendly form is run:<runId>[/codon:<codonId>[@attempt]][.field…]");
  const [, runId, codonId, attempt, tail] = m;
  const rest = tail ? segments(text, tail.startsWith(".") ? tail.slice(1) : tail) : [];
  if (attempt !== undefined && Number(attempt) < 1) throw bad(text, "attempts count from 1 (@1 is the first)");
  const codon: CodonSelector | null = codonId === undefined ? null : { by: "id", codonId, attempt: attempt === undefined ? null : Number(attempt) };
  return { scope: "run", run: { by: "id", runId }, codon, rest, text };
}

/** Read `rest` below `root` (undefined when a step is missing). */
export function readAt(root: unknown, rest: readonly Segment[]): unknown {
  let v: unknown = root;
  for (const s of rest) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[s];
  }
  return v;
}

/** The canonical index-form text of a resolved path. */
export function indexPathText(ri: number | null, ci: number | null, rest: readonly Segment[]): string {
  let s = ri === null ? "" : `runs[${ri}]`;
  if (ci !== null) s += `.codons[${ci}]`;
  for (const r of rest) s += typeof r === "number" ? `[${r}]` : s === "" ? r : `.${r}`;
  return s;
}
