/**
 * Zod schemas of the value types shared by events, transitions and state.json. Objects are loose
 * (`z.looseObject`): unknown extra keys are accepted and kept, as the reference runtime's readers do.
 */
import { z } from "zod";

/** The eight codon statuses. */
export const codonStatusSchema = z.enum([
  "preparing", "starting", "initializing", "running", "completing-sentinels", "completed", "failed", "skipped",
]);

/** `{inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens}`. */
export const tokenUsageSchema = z.looseObject({
  inputTokens: z.number(),
  outputTokens: z.number(),
  cacheCreationTokens: z.number(),
  cacheReadTokens: z.number(),
});

/**
 * `{type, retriable, message?, sentinelRefs?, retryAfterMs?}`. `type` is any string: the runtime's
 * enum (timeout, rate-limit, api-error, sentinel-load-failure, unknown) has grown across versions.
 */
export const failureReasonSchema = z.looseObject({
  type: z.string(),
  retriable: z.boolean(),
  message: z.string().optional(),
  sentinelRefs: z.array(z.string()).optional(),
  retryAfterMs: z.number().optional(),
});

/** `{currency, limit, used}`. */
export const budgetExceededSchema = z.looseObject({ currency: z.string(), limit: z.number(), used: z.number() });

/** `{loopId, iteration, codonIndexInLoop}`. */
export const loopContextSchema = z.looseObject({
  loopId: z.string(),
  iteration: z.number(),
  codonIndexInLoop: z.number(),
});

/** One sentinel's state. */
export const sentinelStateSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  loadedAt: z.string(),
  unloadedAt: z.string().optional(),
  llmCallCount: z.number(),
  failedLLMCalls: z.number(),
  lastLlmCallAt: z.string().optional(),
  totalTriggers: z.number(),
  totalCost: z.number(),
  status: z.string(),
  unloadReason: z.string().optional(),
});

/** A diet pointer `{sha256, bytes, encoding: "utf-8", ref: "cas"}` (format §5.1). */
export const contentRefSchema = z.looseObject({
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  encoding: z.literal("utf-8"),
  ref: z.literal("cas"),
});

/** One flattened execution-plan entry `{codon, codonId, loopContext?}` (the codon config stays opaque). */
export const executionCodonEntrySchema = z.looseObject({
  codon: z.looseObject({}),
  codonId: z.string(),
  loopContext: loopContextSchema.extend({ loopBudget: z.looseObject({}).optional() }).optional(),
});
