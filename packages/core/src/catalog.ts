/**
 * The event catalog (format §2.2): 36 wire types in four categories plus our `plan.updated`.
 * Categories are not on the wire; this table is how every tool derives them.
 */
export type EventCategory = "server-state" | "agentic-backbone" | "sentinel" | "connection-state" | "unknown";

export const SERVER_STATE_TYPES = [
  "codon.started", "codon.completed", "codon.extended", "state.snapshot", "server.idle", "token.usage",
  "info", "error", "checkpoint.list", "rollback.started", "rollback.progress", "rollback.codonCheckpoint",
  "rollback.completed", "rollback.rigCleanup", "rollback.archiveRestore", "state.transition",
  "loop.iteration.completed", "archive.completed", "archive.partial", "budget.summary",
] as const;
export const AGENTIC_BACKBONE_TYPES = [
  "assistant.action", "tool.result", "file.updated", "filetree.updated", "rig.setup.completed",
  "rig.setup.failed", "rig.output",
] as const;
export const SENTINEL_TYPES = [
  "sentinel.loaded", "sentinel.unloaded", "sentinel.error", "sentinel.output", "sentinel.triggered",
] as const;
export const CONNECTION_STATE_TYPES = ["server.ready", "pong", "history.batch", "incomplete.codon"] as const;
/** Our engine's extra journaled server-state type: `{plan: ExecutionCodonEntry[]}`. */
export const PLAN_UPDATED_TYPE = "plan.updated";

const categoryByType = new Map<string, EventCategory>();
for (const t of SERVER_STATE_TYPES) categoryByType.set(t, "server-state");
for (const t of AGENTIC_BACKBONE_TYPES) categoryByType.set(t, "agentic-backbone");
for (const t of SENTINEL_TYPES) categoryByType.set(t, "sentinel");
for (const t of CONNECTION_STATE_TYPES) categoryByType.set(t, "connection-state");
categoryByType.set(PLAN_UPDATED_TYPE, "server-state");

/** The category of an event type; `unknown` for types outside the catalog (passed through). */
export function categoryOf(type: string): EventCategory {
  return categoryByType.get(type) ?? "unknown";
}

/** True for types that are persisted to the journal (everything but connection-state). */
export function isJournaledType(type: string): boolean {
  const c = categoryOf(type);
  return c !== "connection-state";
}

/** The 36 catalog types (without `plan.updated`). */
export const ALL_EVENT_TYPES: readonly string[] = [
  ...SERVER_STATE_TYPES, ...AGENTIC_BACKBONE_TYPES, ...SENTINEL_TYPES, ...CONNECTION_STATE_TYPES,
];
