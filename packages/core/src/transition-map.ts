/**
 * The codon state machine (seeds/001): the transition map and the metadata guards of
 * `CodonTransitioned`. Pure data and predicates.
 */
import type { CodonStatus, TerminalCodonStatus } from "./state-types.js";

/** The eight statuses, in lifecycle order. */
export const CODON_STATUSES: readonly CodonStatus[] = [
  "preparing", "starting", "initializing", "running", "completing-sentinels", "completed", "failed", "skipped",
];

/**
 * `CodonTransitions` of the reference runtime: the only legal `from → to` edges.
 * Terminal statuses have no outgoing edge.
 * @example CODON_TRANSITIONS.running.includes("completed") // true
 */
export const CODON_TRANSITIONS: Readonly<Record<CodonStatus, readonly CodonStatus[]>> = {
  preparing: ["starting", "failed", "skipped"],
  starting: ["initializing", "failed", "skipped"],
  initializing: ["running", "completed", "failed", "skipped"],
  running: ["completing-sentinels", "completed", "failed", "skipped"],
  "completing-sentinels": ["completed", "failed", "skipped"],
  completed: [],
  failed: [],
  skipped: [],
};

/** True for one of the eight status strings. */
export function isCodonStatus(s: unknown): s is CodonStatus {
  return typeof s === "string" && Object.hasOwn(CODON_TRANSITIONS, s);
}

/** True for `completed`, `failed` and `skipped` (the runtime's `isTerminalCodonStatus`). */
export function isTerminalCodonStatus(s: unknown): s is TerminalCodonStatus {
  return s === "completed" || s === "failed" || s === "skipped";
}

/** True when `from → to` is an edge of the transition map (false for unknown statuses). */
export function isValidCodonEdge(from: unknown, to: unknown): boolean {
  return isCodonStatus(from) && isCodonStatus(to) && CODON_TRANSITIONS[from].includes(to);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/**
 * The metadata a `CodonTransitioned` to `to` requires, checked like the runtime's type guards:
 * →initializing: numeric `claudePid` and string `claudeLogPath`; →running: string
 * `claudeSessionId`; →completed: non-empty string `checkpointSha`; →failed: numeric `exitCode`,
 * object `failureReason`, string `failedDuring`; →skipped: string `skippedDuring`. Other targets
 * need nothing. Returns the names of the missing/ill-typed keys (empty when satisfied).
 * @example missingMetadata("running", {}) // ["claudeSessionId"]
 */
export function missingMetadata(to: CodonStatus, metadata: unknown): string[] {
  const m: Record<string, unknown> = isObject(metadata) ? metadata : {};
  const missing: string[] = [];
  const need = (key: string, ok: (v: unknown) => boolean): void => {
    if (!ok(m[key])) missing.push(key);
  };
  const isNumber = (v: unknown): boolean => typeof v === "number";
  const isString = (v: unknown): boolean => typeof v === "string";
  switch (to) {
    case "initializing":
      need("claudePid", isNumber);
      need("claudeLogPath", isString);
      break;
    case "running":
      need("claudeSessionId", isString);
      break;
    case "completed":
      need("checkpointSha", (v) => typeof v === "string" && v.length > 0);
      break;
    case "failed":
      need("exitCode", isNumber);
      need("failureReason", isObject);
      need("failedDuring", isString);
      break;
    case "skipped":
      need("skippedDuring", isString);
      break;
    default:
      break;
  }
  return missing;
}
