/**
 * The advisory `events.meta.json` sidecar (format §2.5): compact JSON, keys in the order
 * schemaVersion, eventSchemaVersion, totalEvents, byteLength, lastEventId; written via tmp + rename.
 * The journal always wins: the sidecar is trusted only when its byteLength equals the file size.
 */
import * as fsp from "node:fs/promises";
import { resolveExec, type ExecRef } from "@hankweave-journal/core";
import { ioError, writeFileDurable, type Durability } from "./durable-file.js";
import { statOrUndefined } from "./fs-checks.js";

export const SIDECAR_SCHEMA_VERSION = 1;
/** The event schema our writer produces (file.updated carries sha256/bytes/source). */
export const EVENT_SCHEMA_VERSION = 2;
/** The writer rewrites the sidecar after this many appended events. */
export const SIDECAR_EVERY_EVENTS = 1000;

/** The sidecar's content. */
export interface Sidecar {
  schemaVersion: number;
  eventSchemaVersion: number;
  totalEvents: number;
  byteLength: number;
  lastEventId: string | null;
}

/** How a sidecar relates to its journal. */
export type SidecarStatus =
  | { status: "absent" }
  | { status: "invalid"; reason: string }
  /** byteLength equals the file size: trusted. */
  | { status: "ok"; sidecar: Sidecar }
  /** byteLength smaller than the file: trusted as a prefix count, the rest is counted. */
  | { status: "stale"; sidecar: Sidecar }
  /** byteLength larger than the file: ignored (recount from 0). */
  | { status: "lying"; sidecar: Sidecar };

/** The exact bytes of a sidecar: compact JSON in format §2.5's key order. */
export function serializeSidecar(s: Sidecar): string {
  return JSON.stringify({
    schemaVersion: s.schemaVersion,
    eventSchemaVersion: s.eventSchemaVersion,
    totalEvents: s.totalEvents,
    byteLength: s.byteLength,
    lastEventId: s.lastEventId,
  });
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

/** Parse sidecar text; returns a reason string when it is not a valid sidecar. */
export function parseSidecar(text: string): Sidecar | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not a JSON object";
  const o = v as Record<string, unknown>;
  if (!isCount(o.schemaVersion)) return "schemaVersion is not a non-negative integer";
  if (!isCount(o.eventSchemaVersion)) return "eventSchemaVersion is not a non-negative integer";
  if (!isCount(o.totalEvents)) return "totalEvents is not a non-negative integer";
  if (!isCount(o.byteLength)) return "byteLength is not a non-negative integer";
  if (o.lastEventId !== null && typeof o.lastEventId !== "string") return "lastEventId is neither a string nor null";
  if (o.totalEvents > o.byteLength) return "totalEvents exceeds byteLength";
  return {
    schemaVersion: o.schemaVersion,
    eventSchemaVersion: o.eventSchemaVersion,
    totalEvents: o.totalEvents,
    byteLength: o.byteLength,
    lastEventId: o.lastEventId as string | null,
  };
}

/** Read the sidecar of `exec` and classify it against a journal of `fileBytes` bytes. Never throws on content. */
export async function readSidecarStatus(exec: ExecRef, fileBytes: number): Promise<SidecarStatus> {
  const path = resolveExec(exec).sidecar;
  const st = await statOrUndefined(path);
  if (!st) return { status: "absent" };
  if (!st.isFile()) return { status: "invalid", reason: "not a regular file" };
  let text: string;
  try {
    text = await fsp.readFile(path, "utf8");
  } catch (e) {
    throw ioError(e, path);
  }
  const parsed = parseSidecar(text);
  if (typeof parsed === "string") return { status: "invalid", reason: parsed };
  if (parsed.byteLength === fileBytes) return { status: "ok", sidecar: parsed };
  if (parsed.byteLength < fileBytes) return { status: "stale", sidecar: parsed };
  return { status: "lying", sidecar: parsed };
}

/**
 * Write the sidecar via tmp + rename (`writeFileDurable`: fsync of the temp file and the directory
 * unless `durability` is none). The previous sidecar stays intact until the rename.
 */
export async function writeSidecar(exec: ExecRef, s: Sidecar, opts: { durability?: Durability } = {}): Promise<void> {
  const l = resolveExec(exec);
  await writeFileDurable(l.sidecar, serializeSidecar(s), { tmp: l.sidecarTmp, ...opts });
}
