/**
 * The minimal shape check the reducer applies before folding a transition, so that arbitrary
 * (even hostile) input never throws and never writes `NaN` or `undefined` into state. It checks
 * only what the reducer reads; the zod schemas in `schemas/` are the full wire contract.
 */
import type { Finding } from "./reader-contract.js";
import { findingOf } from "./reducer-findings.js";

type Check = (d: Record<string, unknown>) => string | null;

const str = (k: string): Check => (d) => (typeof d[k] === "string" ? null : `${k} must be a string`);
const num = (k: string): Check => (d) => (typeof d[k] === "number" ? null : `${k} must be a number`);
const obj = (k: string): Check => (d) =>
  typeof d[k] === "object" && d[k] !== null && !Array.isArray(d[k]) ? null : `${k} must be an object`;
const arr = (k: string): Check => (d) => (Array.isArray(d[k]) ? null : `${k} must be an array`);
const tokens = (k: string): Check => (d) => {
  const v = d[k] as Record<string, unknown> | null;
  if (typeof v !== "object" || v === null) return `${k} must be a TokenUsage object`;
  for (const f of ["inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"]) {
    if (typeof v[f] !== "number") return `${k}.${f} must be a number`;
  }
  return null;
};
const RUN = str("runId");
const CODON = [str("runId"), str("codonId")];

/** Required fields per transition type (what the reducer reads). */
const SHAPES: Record<string, Check[]> = {
  RunStarted: [RUN],
  RunCompleted: [RUN],
  RunFailed: [RUN],
  RunCrashed: [RUN, str("detectedAt")],
  CodonStarted: CODON,
  CodonTransitioned: CODON,
  CostsUpdated: [...CODON, num("cost"), obj("tokens")],
  CostsIncremented: [...CODON, num("costDelta"), tokens("tokensDelta")],
  AssistantMessageCountUpdated: [...CODON, num("newCount")],
  ExtensionCountUpdated: [...CODON, num("extensionCount")],
  CheckpointCreated: [...CODON, str("sha")],
  InitialCheckpointSet: [str("sha")],
  CodonFinalCostSet: [...CODON, num("finalCost"), obj("finalTokens")],
  SentinelStatesUpdated: [...CODON, arr("sentinelStates"), num("totalCost")],
};

/** The 14 transition type names, in the seeds' order. */
export const TRANSITION_TYPES: readonly string[] = Object.keys(SHAPES);

/** Null when `t` is `{type: <one of the 14>, data: {...}}` with what the reducer needs; else a Finding. */
export function checkShape(t: unknown): Finding | null {
  if (typeof t !== "object" || t === null) {
    return findingOf("MALFORMED_TRANSITION", "error", "a transition must be an object {type, data}", t);
  }
  const { type, data } = t as { type?: unknown; data?: unknown };
  if (typeof type !== "string" || !Object.hasOwn(SHAPES, type)) {
    return findingOf("UNKNOWN_TRANSITION_TYPE", "error", `unknown transition type ${JSON.stringify(type) ?? "undefined"}`, t);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return findingOf("MALFORMED_TRANSITION", "error", `${type}: data must be an object`, t);
  }
  for (const check of SHAPES[type]) {
    const why = check(data as Record<string, unknown>);
    if (why !== null) return findingOf("MALFORMED_TRANSITION", "error", `${type}: ${why}`, t);
  }
  return null;
}
