/**
 * Building one journal line from a caller's event: id and timestamp as the reference runtime makes
 * them, envelope validation, connection-state rejection, and the exact compact serialization.
 */
import { JournalError, categoryOf, type JournalEvent } from "@hankweave-journal/core";

/** What the caller gives `append`: id and timestamp are made by the writer when absent. */
export interface NewEvent {
  type: string;
  data: unknown;
  id?: string;
  timestamp?: string;
}

/** Clock and randomness used for ids and timestamps (injectable for tests). */
export interface IdSource {
  now: () => number;
  random: () => number;
}

/**
 * An event id as the reference runtime makes it: `${Date.now()}-${Math.random().toString(36).substring(2, 11)}`.
 * Guarantees: decimal ms, `-`, up to 9 base-36 chars. Not unique by contract (order is file position).
 * @example makeEventId(() => 1772736515931, () => 0.5) // "1772736515931-i"
 */
export function makeEventId(now: number, random: number): string {
  return `${now}-${random.toString(36).substring(2, 11)}`;
}

/**
 * Validate `e` and return the envelope in canonical key order plus its exact line bytes
 * (`JSON.stringify({id, timestamp, type, data})` + "\n").
 *
 * Throws CONNECTION_STATE_EVENT for never-journaled types and INVALID_EVENT for anything that is
 * not an envelope (non-string id/timestamp/type, empty type, absent or unserializable data, a
 * line containing a raw newline, which cannot happen with JSON.stringify but is checked anyway).
 */
export function buildLine(e: NewEvent, ids: IdSource): { event: JournalEvent; bytes: Buffer } {
  if (typeof e !== "object" || e === null) throw new JournalError("INVALID_EVENT", "an event must be an object", { actual: typeof e });
  if (typeof e.type !== "string" || e.type.length === 0) {
    throw new JournalError("INVALID_EVENT", "event type must be a non-empty string", { actual: e.type });
  }
  if (categoryOf(e.type) === "connection-state") {
    throw new JournalError("CONNECTION_STATE_EVENT", `${e.type} is a connection-state event and is never journaled`, {
      actual: e.type,
    });
  }
  if (!("data" in e) || e.data === undefined) {
    throw new JournalError("INVALID_EVENT", `event ${e.type} has no data`, { actual: e.type });
  }
  if (e.id !== undefined && typeof e.id !== "string") throw new JournalError("INVALID_EVENT", "id must be a string", { actual: e.id });
  if (e.timestamp !== undefined && typeof e.timestamp !== "string") {
    throw new JournalError("INVALID_EVENT", "timestamp must be a string", { actual: e.timestamp });
  }
  const needClock = e.id === undefined || e.timestamp === undefined;
  const now = needClock ? ids.now() : 0;
  const event: JournalEvent = {
    id: e.id ?? makeEventId(now, ids.random()),
    timestamp: e.timestamp ?? new Date(now).toISOString(),
    type: e.type,
    data: e.data,
  };
  let text: string;
  try {
    // JSON.stringify drops a `data` key whose value serializes to nothing (function, symbol, a
    // toJSON returning undefined); check those cases only, so the common path stringifies once.
    const d = e.data as { toJSON?: unknown } | null;
    const suspicious = typeof d === "function" || typeof d === "symbol" || (typeof d === "object" && d !== null && typeof d.toJSON === "function");
    if (suspicious && JSON.stringify(e.data) === undefined) {
      throw new JournalError("INVALID_EVENT", `event ${e.type} data does not serialize to JSON`, { actual: typeof e.data });
    }
    text = JSON.stringify(event);
  } catch (err) {
    if (err instanceof JournalError) throw err;
    throw new JournalError("INVALID_EVENT", `event ${e.type} cannot be serialized: ${(err as Error).message}`, {}, { cause: err });
  }
  if (text.includes("\n")) throw new JournalError("INVALID_EVENT", "a serialized event contains a newline", {});
  return { event, bytes: Buffer.from(text + "\n", "utf8") };
}
