// STUB — owned by the journal work (issue 2). Signatures other packages compile against.
import type { JournalReader, JournalEvent } from "@hankweave-journal/core";

export type Durability = "none" | "batch" | "every";

/** What the caller gives `append`: id and timestamp are made by the writer when absent. */
export interface NewEvent {
  type: string;
  data: unknown;
  id?: string;
  timestamp?: string;
}

/** What an append returns once the line is written (and fsynced under `every`/`batch`). */
export interface AppendedEvent {
  line: number;
  offset: number;
  bytes: number;
  event: JournalEvent;
}

export interface WriterOptions {
  durability?: Durability;
  /** Injected clock (ms since epoch) for ids and timestamps; default Date.now. */
  now?: () => number;
  /** Injected randomness for ids; default Math.random. */
  random?: () => number;
}

export interface JournalWriter {
  append(event: NewEvent): Promise<AppendedEvent>;
  appendMany(events: NewEvent[]): Promise<AppendedEvent[]>;
  close(): Promise<void>;
}

export async function openJournalWriter(_exec: string, _opts: WriterOptions = {}): Promise<JournalWriter> {
  throw new Error("not implemented yet");
}

export async function openPlainReader(_exec: string): Promise<JournalReader> {
  throw new Error("not implemented yet");
}
