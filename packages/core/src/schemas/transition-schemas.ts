/**
 * Zod schemas of the 14 StateTransition types (seeds/001) and of the `state.transition` event data
 * (format §2.3). Field requirements follow the runtime's TypeScript types; objects are loose.
 */
import { z } from "zod";
import {
  budgetExceededSchema, codonStatusSchema, failureReasonSchema, loopContextSchema, sentinelStateSchema, tokenUsageSchema,
} from "./common.js";

const run = { runId: z.string() };
const codon = { runId: z.string(), codonId: z.string() };

/** `StartingConditions`: fresh or continuation. */
export const startingConditionsSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("fresh"), initialCheckpointSha: z.string().optional() }),
  z.looseObject({
    type: z.literal("continuation"),
    source: z.looseObject({ runId: z.string(), afterCodon: z.string().nullable(), checkpointSha: z.string() }),
    reason: z.string().optional(),
  }),
]);

/** `CodonTransitioned.metadata`: every key optional, typed when present. */
export const transitionMetadataSchema = z.looseObject({
  claudePid: z.number().optional(),
  claudeLogPath: z.string().optional(),
  previousSessionId: z.string().optional(),
  claudeSessionId: z.string().optional(),
  exitCode: z.number().optional(),
  failureReason: failureReasonSchema.optional(),
  failedDuring: codonStatusSchema.optional(),
  skippedDuring: codonStatusSchema.optional(),
  resultMessageReceived: z.boolean().optional(),
  sentinelCount: z.number().optional(),
  sentinelIds: z.array(z.string()).optional(),
  checkpointSha: z.string().optional(),
  checkpointBranch: z.string().optional(),
  contextExceeded: z.boolean().optional(),
  extensionCount: z.number().optional(),
  budgetExceeded: budgetExceededSchema.optional(),
});

const t = <T extends string, S extends z.ZodRawShape>(type: T, data: S) =>
  z.looseObject({ type: z.literal(type), data: z.looseObject(data) });

/** One schema per transition type, keyed by type. */
export const TRANSITION_SCHEMAS = {
  RunStarted: t("RunStarted", {
    ...run, runFolder: z.string(), gitBranch: z.string(), startingConditions: startingConditionsSchema, serverPid: z.number(),
  }),
  RunCompleted: t("RunCompleted", run),
  RunFailed: t("RunFailed", run),
  RunCrashed: t("RunCrashed", { ...run, detectedAt: z.string(), lastCodonStatus: codonStatusSchema.optional() }),
  CodonStarted: t("CodonStarted", { ...codon, loopContext: loopContextSchema.optional() }),
  CodonTransitioned: t("CodonTransitioned", {
    ...codon, from: codonStatusSchema, to: codonStatusSchema, metadata: transitionMetadataSchema.optional(),
  }),
  CostsUpdated: t("CostsUpdated", { ...codon, cost: z.number(), tokens: tokenUsageSchema }),
  CostsIncremented: t("CostsIncremented", { ...codon, costDelta: z.number(), tokensDelta: tokenUsageSchema }),
  AssistantMessageCountUpdated: t("AssistantMessageCountUpdated", { ...codon, newCount: z.number() }),
  ExtensionCountUpdated: t("ExtensionCountUpdated", { ...codon, extensionCount: z.number() }),
  CheckpointCreated: t("CheckpointCreated", {
    ...codon, checkpointType: z.enum(["rig-setup", "completed", "error", "skipped"]), sha: z.string(), branch: z.string().optional(),
  }),
  InitialCheckpointSet: t("InitialCheckpointSet", { sha: z.string() }),
  CodonFinalCostSet: t("CodonFinalCostSet", { ...codon, finalCost: z.number(), finalTokens: tokenUsageSchema }),
  SentinelStatesUpdated: t("SentinelStatesUpdated", {
    ...codon, sentinelStates: z.array(sentinelStateSchema), totalCost: z.number(),
  }),
} as const;

/** A StateTransition `{type, data}` of any of the 14 types. */
export const stateTransitionSchema = z.discriminatedUnion("type", [
  TRANSITION_SCHEMAS.RunStarted, TRANSITION_SCHEMAS.RunCompleted, TRANSITION_SCHEMAS.RunFailed, TRANSITION_SCHEMAS.RunCrashed,
  TRANSITION_SCHEMAS.CodonStarted, TRANSITION_SCHEMAS.CodonTransitioned, TRANSITION_SCHEMAS.CostsUpdated,
  TRANSITION_SCHEMAS.CostsIncremented, TRANSITION_SCHEMAS.AssistantMessageCountUpdated,
  TRANSITION_SCHEMAS.ExtensionCountUpdated, TRANSITION_SCHEMAS.CheckpointCreated, TRANSITION_SCHEMAS.InitialCheckpointSet,
  TRANSITION_SCHEMAS.CodonFinalCostSet, TRANSITION_SCHEMAS.SentinelStatesUpdated,
]);

/** `{currentRunId, runCount, totalCost, currentRunCost}`. */
export const resultingStateSchema = z.looseObject({
  currentRunId: z.string().nullable(),
  runCount: z.number(),
  totalCost: z.number(),
  currentRunCost: z.number(),
});

/**
 * `state.transition` data: `{transitionType, runId?, codonId?, transition, resultingState}`, with
 * `transitionType` equal to `transition.type`.
 */
export const stateTransitionEventDataSchema = z.looseObject({
  transitionType: z.enum(Object.keys(TRANSITION_SCHEMAS) as [keyof typeof TRANSITION_SCHEMAS]),
  runId: z.string().optional(),
  codonId: z.string().optional(),
  transition: stateTransitionSchema,
  resultingState: resultingStateSchema,
}).refine((d) => d.transitionType === d.transition.type, {
  message: "transitionType must equal transition.type",
  path: ["transitionType"],
});
