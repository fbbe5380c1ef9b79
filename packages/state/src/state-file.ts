/**
 * Reading and atomically writing `state.json` (format §4.1).
 *
 * Save protocol: copy `state.json` to `state.json.bak`, write `state.json.tmp`, fsync, rename over
 * `state.json`, fsync the directory. A crash at any point leaves `state.json` either the old or the
 * new complete file. `durability: "none"` skips the fsyncs (tests, bulk generation), never the rename.
 */
import { promises as fsp } from "node:fs";
import { JournalError, type HankweaveState, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { copyFileNoFollow, ioError, writeFileDurable, type Durability } from "@hankweave-journal/journal";

/** `state.json` bytes: `JSON.stringify(state, null, 2)`, no trailing newline (the runtime's format). */
export function serializeState(state: HankweaveState): string {
  return JSON.stringify(state, null, 2);
}

/** What is on disk at one state path. */
export type StateFileRead =
  | { kind: "ok"; state: HankweaveState; text: string }
  | { kind: "missing" }
  | { kind: "corrupt"; error: JournalError };

/** True when `v` has the shape of a HankweaveState (runs array, currentRunId string|null, executionPlan array). */
export function isStateShape(v: unknown): v is HankweaveState {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  if (!Array.isArray(o.runs) || !Array.isArray(o.executionPlan)) return false;
  if (!(o.currentRunId === null || typeof o.currentRunId === "string")) return false;
  return o.runs.every((r) => r !== null && typeof r === "object" && typeof (r as { runId?: unknown }).runId === "string"
    && Array.isArray((r as { codons?: unknown }).codons));
}

/** Parse state JSON text; `corrupt` (STATE_CORRUPT) when it is not JSON of the state shape. Pure. */
export function parseStateText(text: string, path: string): StateFileRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { kind: "corrupt", error: new JournalError("STATE_CORRUPT", `${path} is not valid JSON`, { path }, { cause: e }) };
  }
  if (!isStateShape(value)) {
    return { kind: "corrupt", error: new JournalError("STATE_CORRUPT", `${path} is JSON but not a state object`, { path }) };
  }
  return { kind: "ok", state: value, text };
}

/** Read one state file (`state.json` or `.bak`). Never throws for content; throws IO_ERROR for OS errors other than ENOENT. */
export async function readStateFile(path: string): Promise<StateFileRead> {
  let text: string;
  try {
    const st = await fsp.stat(path);
    if (!st.isFile()) {
      return { kind: "corrupt", error: new JournalError("NOT_A_REGULAR_FILE", `${path} is not a regular file`, { path }) };
    }
    text = await fsp.readFile(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    throw ioError(e, path);
  }
  return parseStateText(text, path);
}

/** `state.json` and `state.json.bak` of an execution, as found. */
export interface SavedStates {
  main: StateFileRead;
  bak: StateFileRead;
}

/** Read both saved state files of `exec`. */
export async function readSavedStates(exec: ExecRef): Promise<SavedStates> {
  const l = resolveExec(exec);
  const [main, bak] = await Promise.all([readStateFile(l.state), readStateFile(l.stateBak)]);
  return { main, bak };
}

/** The runtime's load ladder: `state.json`, then `.bak`, then null. */
export function savedStateOf(saved: SavedStates): HankweaveState | null {
  if (saved.main.kind === "ok") return saved.main.state;
  if (saved.bak.kind === "ok") return saved.bak.state;
  return null;
}

export interface SaveOptions {
  /** The durability policy (durable-file.ts): "none" skips fsync of the files and the directory. Default DEFAULT_DURABILITY. */
  durability?: Durability;
}

/**
 * Atomically save `text` as `state.json` of `exec` (format §4.1 order). Keeps the previous file as
 * `.bak` (when there was one). Removes the temp file on failure. Never writes through a symbolic
 * link: a link at `state.json.bak` is refused (SYMLINK_REFUSED), one at `state.json.tmp` is
 * unlinked and the temp created exclusively, one at `state.json` is replaced by the rename.
 */
export async function writeStateText(exec: ExecRef, text: string, opts: SaveOptions = {}): Promise<void> {
  const l = resolveExec(exec);
  try {
    await fsp.mkdir(l.hankweave, { recursive: true });
  } catch (e) {
    throw ioError(e, l.hankweave);
  }
  await copyFileNoFollow(l.state, l.stateBak, opts);
  await writeFileDurable(l.state, text, { tmp: l.stateTmp, ...opts });
}

/** `writeStateText(exec, serializeState(state), opts)`. */
export async function saveState(exec: ExecRef, state: HankweaveState, opts: SaveOptions = {}): Promise<void> {
  await writeStateText(exec, serializeState(state), opts);
}
