/**
 * Zod payload schemas of the 36 catalog event types plus `plan.updated` (format §2.2), and the
 * envelope `{id, timestamp, type, data}`. Payloads are loose objects (unknown fields survive).
 *
 * Provenance: the fields of the types that occur in ../shared/conformance (assistant.action,
 * codon.completed, codon.started, error, file.updated v1, filetree.updated, info,
 * loop.iteration.completed, rig.setup.completed, rig.setup.failed, sentinel.loaded,
 * sentinel.output, sentinel.triggered, sentinel.unloaded, state.snapshot, state.transition,
 * token.usage, tool.result) are checked against every such event there; the others are written
 * from the reference docs and require only what those name, everything else optional.
 */
import { z } from "zod";
import { budgetExceededSchema, contentRefSchema, executionCodonEntrySchema, failureReasonSchema } from "./common.js";
import { stateTransitionEventDataSchema } from "./transition-schemas.js";

const loose = z.looseObject;
const codonId = { codonId: z.string() };
const sentinelIds = { sentinelId: z.string(), codonId: z.string() };

/** `file.updated` v1 (event schema 1): the body inline in `content` (or, dieted, a `contentRef`). */
export const fileUpdatedV1Schema = loose({
  path: z.string(),
  filename: z.string().optional(),
  content: z.string(),
  action: z.string().optional(),
});
/** `file.updated` v2 (event schema 2): `sha256`, `bytes`, `source` instead of the body. */
export const fileUpdatedV2Schema = loose({
  path: z.string(),
  filename: z.string().optional(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  bytes: z.number().int().nonnegative(),
  source: z.string(),
  action: z.string().optional(),
});
/** `file.updated` after a diet moved the v1 body to the CAS. */
export const fileUpdatedDietedSchema = loose({
  path: z.string(),
  filename: z.string().optional(),
  contentRef: contentRefSchema,
  action: z.string().optional(),
});

/** `state.snapshot.recentFileAccess`: `{path, content | contentRef, timestamp}`. */
const recentFileAccessSchema = z.union([
  loose({ path: z.string(), content: z.string(), timestamp: z.string().optional() }),
  loose({ path: z.string(), contentRef: contentRefSchema, timestamp: z.string().optional() }),
]);

/** Payload schema per event type, with its literal keys (the types below are inferred from it). */
const PAYLOAD_SCHEMAS = {
  // --- server-state (20)
  "codon.started": loose({ ...codonId, codonName: z.string().optional(), codonDescription: z.string().optional(), sessionId: z.string().optional(), startTime: z.string() }),
  "codon.completed": loose({
    ...codonId, success: z.boolean(), cost: z.number(), duration: z.number(), exitStatus: loose({}).optional(),
    failureReason: failureReasonSchema.nullable().optional(), budgetExceeded: budgetExceededSchema.optional(),
  }),
  "codon.extended": loose({ codonId: z.string().optional(), extensionCount: z.number().optional() }),
  "state.snapshot": loose({
    currentCodon: z.unknown().optional(), completedCodons: z.array(loose({ codonId: z.string() })), fileTree: z.array(z.unknown()),
    totalCost: z.number(), totalTime: z.number(), recentFileAccess: recentFileAccessSchema.nullable().optional(),
    isRollingBack: z.boolean(),
  }),
  "server.idle": loose({}),
  "token.usage": loose({
    ...codonId, inputTokens: z.number(), outputTokens: z.number(), cacheCreationTokens: z.number(), cacheReadTokens: z.number(),
    totalCost: z.number(), modelId: z.string().optional(), modelUsage: z.record(z.string(), z.unknown()).optional(),
  }),
  info: loose({ message: z.string() }),
  error: loose({ message: z.string(), context: z.string().optional(), codon: z.string().optional(), fatal: z.boolean().optional(), severity: z.string().optional() }),
  "checkpoint.list": loose({ checkpoints: z.array(z.unknown()).optional() }),
  "rollback.started": loose({}),
  "rollback.progress": loose({}),
  "rollback.codonCheckpoint": loose({}),
  "rollback.completed": loose({}),
  "rollback.rigCleanup": loose({}),
  "rollback.archiveRestore": loose({}),
  "state.transition": stateTransitionEventDataSchema,
  "loop.iteration.completed": loose({
    loopId: z.string(), iteration: z.number(), durationMs: z.number().optional(), costUsd: z.number().optional(),
    tokensUsed: z.number().optional(), isFinal: z.boolean().optional(), terminationReason: z.string().optional(),
  }),
  "archive.completed": loose({}),
  "archive.partial": loose({}),
  "budget.summary": loose({}),
  // --- agentic-backbone (7)
  "assistant.action": loose({ ...codonId, action: z.string(), content: z.string().optional(), toolName: z.string().optional(), toolInput: z.unknown().optional() }),
  "tool.result": loose({
    ...codonId, toolUseId: z.string(), toolName: z.string().optional(), result: z.string().optional(), truncated: z.boolean().optional(),
    originalLength: z.number().optional(), executionTimeMs: z.number().optional(), isError: z.boolean().optional(),
  }),
  "file.updated": z.union([fileUpdatedV1Schema, fileUpdatedV2Schema, fileUpdatedDietedSchema]),
  "filetree.updated": loose({ tree: z.array(z.unknown()) }),
  "rig.setup.completed": loose({ ...codonId, rigType: z.string().optional(), commandCount: z.number().optional(), durationMs: z.number().optional(), createdCheckpoint: z.boolean().optional() }),
  "rig.setup.failed": loose({ ...codonId, failureType: z.string().optional(), exitCode: z.number().optional(), commandIndex: z.number().optional(), ignored: z.boolean().optional() }),
  "rig.output": loose({ codonId: z.string().optional() }),
  // --- sentinel (5)
  "sentinel.loaded": loose({ ...sentinelIds, model: z.string().optional(), triggerType: z.string().optional(), executionStrategy: z.string().optional() }),
  "sentinel.unloaded": loose({ ...sentinelIds, reason: z.string().optional(), finalCost: z.number().optional(), llmCallCount: z.number().optional() }),
  "sentinel.error": loose({ sentinelId: z.string().optional(), codonId: z.string().optional() }),
  "sentinel.output": loose({ ...sentinelIds, triggerNumber: z.number().optional(), outputType: z.string().optional(), content: z.unknown().optional(), cost: z.number().optional() }),
  "sentinel.triggered": loose({ ...sentinelIds, triggerNumber: z.number().optional(), strategy: z.string().optional(), eventCount: z.number().optional(), queueSize: z.number().optional() }),
  // --- connection-state (4): never journaled
  "server.ready": loose({}),
  pong: loose({}),
  "history.batch": loose({ events: z.array(z.unknown()).optional() }),
  "incomplete.codon": loose({}),
  // --- ours
  "plan.updated": loose({ plan: z.array(executionCodonEntrySchema) }),
} satisfies Record<string, z.ZodType>;

/** Payload schema per event type (36 catalog types + plan.updated). */
export const EVENT_PAYLOAD_SCHEMAS: Readonly<Record<string, z.ZodType>> = PAYLOAD_SCHEMAS;

/** An event type with a payload schema (the catalog's 36 plus `plan.updated`). */
export type KnownEventType = keyof typeof PAYLOAD_SCHEMAS;
/** The payload (`data`) of an event of type `T`, as its zod schema parses it. */
export type EventDataOf<T extends KnownEventType> = z.output<(typeof PAYLOAD_SCHEMAS)[T]>;
/**
 * A journal event whose `data` is typed by its `type`: a discriminated union over the known
 * types, so `if (e.type === "codon.completed") e.data.cost` type-checks (see `knownEvent`).
 */
export type KnownEvent = {
  [T in KnownEventType]: { id: string; timestamp: string; type: T; data: EventDataOf<T> };
}[KnownEventType];

/** ISO-8601 UTC with milliseconds, as `Date.prototype.toISOString` writes it. */
export const ISO_TIMESTAMP_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The envelope `{id, timestamp, type, data}` (payload not checked). */
export const envelopeSchema = z.looseObject({
  id: z.string().min(1),
  timestamp: z.string().regex(ISO_TIMESTAMP_RE),
  type: z.string().min(1),
  data: z.unknown().refine((d) => d !== undefined, { message: "data is required" }),
});
