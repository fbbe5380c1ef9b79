/**
 * Checking one journal event against the envelope and its payload schema. Verifiers in a pair
 * (STYLE): `safeParseEvent` returns a result, `parseEvent` throws the first problem as a
 * JournalError `INVALID_EVENT`; `validateEnvelope` lists envelope problems only.
 */
import type { z } from "zod";
import { categoryOf, isJournaledType, type EventCategory } from "../catalog.js";
import { JournalError } from "../errors.js";
import type { Finding, JournalEvent } from "../reader-contract.js";
import { envelopeSchema, EVENT_PAYLOAD_SCHEMAS, type KnownEvent } from "./event-schemas.js";

/** A checked event with what the catalog says about its type. */
export interface CheckedEvent {
  event: JournalEvent;
  category: EventCategory;
  /** False for connection-state types (never journaled). */
  journaled: boolean;
  /** False when the type is outside the catalog: its payload was passed through unchecked. */
  known: boolean;
}

/** Result of `safeParseEvent`. */
export type SafeParseEventResult =
  | { success: true; value: CheckedEvent }
  | { success: false; error: JournalError; issues: string[] };

function describe(issues: readonly z.core.$ZodIssue[], prefix: string): string[] {
  return issues.map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join(".")}: ${i.message}`);
}

/**
 * Check `obj` as a journal event: the envelope, then the payload schema of its type. Unknown
 * types pass through (known: false); connection-state types parse but are flagged
 * `journaled: false`. The returned event is the input object itself (key order untouched).
 * @example safeParseEvent(JSON.parse(line)).success
 */
export function safeParseEvent(obj: unknown): SafeParseEventResult {
  const env = envelopeSchema.safeParse(obj);
  if (!env.success) {
    const issues = describe(env.error.issues, "");
    return { success: false, issues, error: new JournalError("INVALID_EVENT", `not an event envelope: ${issues[0]}`, { actual: issues }) };
  }
  const event = obj as JournalEvent;
  const schema = EVENT_PAYLOAD_SCHEMAS[event.type];
  const category = categoryOf(event.type);
  if (schema !== undefined) {
    const payload = schema.safeParse(event.data);
    if (!payload.success) {
      const issues = describe(payload.error.issues, "data");
      return {
        success: false, issues,
        error: new JournalError("INVALID_EVENT", `${event.type} payload: ${issues[0]}`, { expected: event.type, actual: issues }),
      };
    }
  }
  return { success: true, value: { event, category, journaled: isJournaledType(event.type), known: schema !== undefined } };
}

/**
 * `safeParseEvent` that throws the JournalError (code INVALID_EVENT) instead of returning it.
 * @example const {event, category} = parseEvent(obj)
 */
export function parseEvent(obj: unknown): CheckedEvent {
  const r = safeParseEvent(obj);
  if (!r.success) throw r.error;
  return r.value;
}

/**
 * Envelope problems of `obj` as findings (code INVALID_EVENT), empty when `{id, timestamp, type,
 * data}` are well formed (non-empty string id and type, ISO-8601 ms UTC timestamp, data present).
 * Does not look at the payload. Key order is not checked here (the writer makes it).
 */
export function validateEnvelope(obj: unknown): Finding[] {
  const env = envelopeSchema.safeParse(obj);
  if (env.success) return [];
  return describe(env.error.issues, "").map((message) => ({ code: "INVALID_EVENT", severity: "error" as const, message }));
}

/**
 * `event` as a `KnownEvent` (its `data` typed by its `type`) when its type has a payload schema and
 * the payload passes it; null for unknown types and invalid payloads. The returned object is
 * `event` itself, not a copy.
 * @example const e = knownEvent(rec.event); if (e?.type === "token.usage") total += e.data.totalCost;
 */
export function knownEvent(event: JournalEvent): KnownEvent | null {
  const schema = EVENT_PAYLOAD_SCHEMAS[event.type];
  if (schema === undefined || !schema.safeParse(event.data).success) return null;
  return event as KnownEvent;
}
