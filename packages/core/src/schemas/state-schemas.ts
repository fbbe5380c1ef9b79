/**
 * Zod schema of `state.json` (format §4.1, seeds/000): the eight codon record variants
 * (discriminated by `status`), Run, StartingConditions, and the root HankweaveState.
 * Loose objects: unknown keys are accepted. Zod's parsed OUTPUT puts schema keys first: use
 * `safeParseState`/`parseState`, which validate and hand back the input object untouched.
 */
import { z } from "zod";
import {
  budgetExceededSchema, codonStatusSchema, executionCodonEntrySchema, failureReasonSchema, loopContextSchema,
  sentinelStateSchema, tokenUsageSchema,
} from "./common.js";
import { startingConditionsSchema } from "./transition-schemas.js";
import { JournalError } from "../errors.js";
import type { HankweaveState } from "../state-types.js";

const loaded = z.looseObject({ loaded: z.array(sentinelStateSchema), totalCost: z.number() });
const executed = z.looseObject({ executed: z.array(sentinelStateSchema), totalCost: z.number() });

const base = {
  codonId: z.string(),
  startTime: z.string(),
  loopContext: loopContextSchema.optional(),
  rigSetupCheckpoint: z.string().optional(),
};
const processFields = {
  claudePid: z.number().optional(),
  claudeLogPath: z.string().optional(),
  claudeSessionId: z.string().optional(),
  previousSessionId: z.string().optional(),
};
const activeCounters = {
  currentCost: z.number(),
  currentTokens: tokenUsageSchema,
  assistantMessageCount: z.number(),
  extensionCount: z.number(),
};

/** The eight status variants of a codon record. */
export const CODON_RECORD_SCHEMAS = {
  preparing: z.looseObject({ ...base, status: z.literal("preparing") }),
  starting: z.looseObject({ ...base, status: z.literal("starting"), sentinels: loaded.optional() }),
  initializing: z.looseObject({
    ...base, ...processFields, status: z.literal("initializing"), claudePid: z.number(), claudeLogPath: z.string(),
    sentinels: loaded.optional(),
  }),
  running: z.looseObject({
    ...base, ...processFields, ...activeCounters, status: z.literal("running"), claudePid: z.number(),
    claudeLogPath: z.string(), claudeSessionId: z.string(), sentinels: loaded.optional(),
  }),
  "completing-sentinels": z.looseObject({
    ...base, ...processFields, ...activeCounters, status: z.literal("completing-sentinels"), claudePid: z.number(),
    claudeLogPath: z.string(), claudeSessionId: z.string(), sentinels: loaded.optional(),
  }),
  completed: z.looseObject({
    ...base, ...processFields, status: z.literal("completed"), endTime: z.string(), exitCode: z.literal(0),
    finalCost: z.number(), finalTokens: tokenUsageSchema, resultMessageReceived: z.boolean(),
    completionCheckpoint: z.string(), sentinels: executed.optional(), budgetExceeded: budgetExceededSchema.optional(),
    extensionCount: z.number().optional(),
  }),
  failed: z.looseObject({
    ...base, ...processFields, status: z.literal("failed"), endTime: z.string(), failedDuring: codonStatusSchema,
    exitCode: z.number(), failureReason: failureReasonSchema, partialCost: z.number(), partialTokens: tokenUsageSchema,
    extensionCount: z.number().optional(), errorCheckpoint: z.string().optional(), sentinels: executed.optional(),
  }),
  skipped: z.looseObject({
    ...base, ...processFields, status: z.literal("skipped"), endTime: z.string(), skippedDuring: codonStatusSchema,
    partialCost: z.number(), partialTokens: tokenUsageSchema, assistantMessageCount: z.number().optional(),
    skipCheckpoint: z.string().optional(), sentinels: executed.optional(),
  }),
} as const;

/** A codon record of any status. */
export const codonExecutionSchema = z.discriminatedUnion("status", [
  CODON_RECORD_SCHEMAS.preparing, CODON_RECORD_SCHEMAS.starting, CODON_RECORD_SCHEMAS.initializing,
  CODON_RECORD_SCHEMAS.running, CODON_RECORD_SCHEMAS["completing-sentinels"], CODON_RECORD_SCHEMAS.completed,
  CODON_RECORD_SCHEMAS.failed, CODON_RECORD_SCHEMAS.skipped,
]);

/** One run. */
export const runSchema = z.looseObject({
  runId: z.string(),
  runFolder: z.string(),
  gitBranch: z.string(),
  startingConditions: startingConditionsSchema,
  codons: z.array(codonExecutionSchema),
  status: z.enum(["running", "completed", "failed", "crashed"]),
  startTime: z.string(),
  serverPid: z.number(),
  endTime: z.string().optional(),
});

/**
 * The whole `state.json`: `{runs, currentRunId, executionPlan, initialCheckpoint?}`.
 * @example hankweaveStateSchema.safeParse(JSON.parse(text)).success
 */
export const hankweaveStateSchema = z.looseObject({
  runs: z.array(runSchema),
  currentRunId: z.string().nullable(),
  executionPlan: z.array(executionCodonEntrySchema),
  initialCheckpoint: z.string().optional(),
});

/** Result of `safeParseState`. */
export type SafeParseStateResult =
  | { success: true; state: HankweaveState }
  | { success: false; error: JournalError; issues: string[] };

/**
 * Check `obj` against the state.json schema and return THE INPUT OBJECT typed as HankweaveState
 * (zod's own output reorders keys, which would change the bytes of state.json: never serialise
 * it). Failure is a JournalError STATE_CORRUPT with the issue paths.
 * @example const r = safeParseState(JSON.parse(text)); if (r.success) use(r.state)
 */
export function safeParseState(obj: unknown): SafeParseStateResult {
  const r = hankweaveStateSchema.safeParse(obj);
  if (r.success) return { success: true, state: obj as HankweaveState };
  const issues = r.error.issues.map((i) => `${["$", ...i.path.map(String)].join(".")}: ${i.message}`);
  return { success: false, issues, error: new JournalError("STATE_CORRUPT", `not a valid state: ${issues[0]}`, { actual: issues }) };
}

/** `safeParseState` that throws the STATE_CORRUPT JournalError. */
export function parseState(obj: unknown): HankweaveState {
  const r = safeParseState(obj);
  if (!r.success) throw r.error;
  return r.state;
}
