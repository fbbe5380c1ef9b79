/**
 * Test helpers of the diet package (not exported from the package index): temp execution
 * directories, dieting raw bytes, collecting a reader's lines.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layoutOf, type JournalReader } from "@hankweave-journal/core";
import { applyDiet, type DietOptions } from "./diet.js";

/** A fresh temp execution directory holding `journal` as events.jsonl (if given). */
export function tempExec(journal?: Buffer | string): string {
  const exec = fs.mkdtempSync(path.join(os.tmpdir(), "hw-diet-"));
  const l = layoutOf(exec);
  fs.mkdirSync(l.eventsDir, { recursive: true });
  if (journal !== undefined) fs.writeFileSync(l.journal, journal);
  return exec;
}

/** Copy an execution directory (e.g. a read-only conformance one) into a writable temp dir. */
export function copyExec(src: string): string {
  const exec = fs.mkdtempSync(path.join(os.tmpdir(), "hw-diet-copy-"));
  fs.cpSync(path.join(src, ".hankweave"), path.join(exec, ".hankweave"), { recursive: true });
  for (const p of walk(exec)) fs.chmodSync(p, fs.statSync(p).isDirectory() ? 0o755 : 0o644);
  return exec;
}

function walk(dir: string): string[] {
  const out = [dir];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/** Write `bytes` as a journal and diet it (forced: generated journals have no finished run). */
export async function dietBytes(bytes: Buffer, opts: DietOptions = {}): Promise<string> {
  const exec = tempExec(bytes);
  await applyDiet(exec, { force: true, ...opts });
  return exec;
}

/** Concatenate what `reader.lines()` yields back into file bytes. */
export async function linesToBytes(reader: JournalReader): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const l of reader.lines()) {
    parts.push(Buffer.from(l.bytes));
    if (l.terminated) parts.push(Buffer.from("\n"));
  }
  return Buffer.concat(parts);
}

/** The error code of a rejected promise ("ok" when it resolves). */
export async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    return (e as { code?: string }).code ?? `no-code: ${String(e)}`;
  }
}

/** Every file under `dir` with its bytes, for "nothing was deleted or changed" assertions. */
export function snapshotDir(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of walk(dir)) {
    if (fs.statSync(p).isFile()) out.set(path.relative(dir, p), fs.readFileSync(p).toString("base64"));
  }
  return out;
}

/** Remove a temp dir. */
export function rmExec(exec: string): void {
  fs.rmSync(exec, { recursive: true, force: true });
}

function ev(i: number, type: string, data: unknown): string {
  const ms = 1772712167696 + i;
  return JSON.stringify({ id: `${ms}-t${i}`, timestamp: new Date(ms).toISOString(), type, data }) + "\n";
}

/** A small journal of one run (RunStarted … RunCompleted) with a file.updated line per body. */
export function finishedJournal(bodies: string[], end: "RunCompleted" | "RunFailed" | null = "RunCompleted", filler = 20): Buffer {
  const lines: string[] = [];
  let i = 0;
  const transition = (type: string) =>
    ev(i++, "state.transition", { transitionType: type, runId: "r1", transition: { type, data: { runId: "r1" } }, resultingState: { currentRunId: "r1", runCount: 1, totalCost: 0, currentRunCost: 0 } });
  lines.push(transition("RunStarted"));
  for (const b of bodies) {
    for (let k = 0; k < filler; k++) lines.push(ev(i++, "info", { message: `step ${k} of body ${b.length}` }));
    lines.push(ev(i++, "file.updated", { path: `f${i}.md`, filename: `f${i}.md`, content: b }));
  }
  if (end) lines.push(transition(end));
  return Buffer.from(lines.join(""));
}

/**
 * A dieted copy of `original` whose manifest lies about the length of one rewritten line (that
 * line's frame, `originalBytes` of the frame and of the journal all +1, so the index still adds
 * up): restore must refuse it. Returns the directory and the index of the lying frame.
 */
export async function dietWithLyingLineLength(original: Buffer): Promise<{ exec: string; frame: number }> {
  const exec = await dietBytes(original, { frameTargetBytes: 16 * 1024, kind: "seekable" });
  const layout = layoutOf(exec);
  const m = JSON.parse(fs.readFileSync(layout.manifest, "utf8"));
  const frame = m.frames.findIndex((x: { rewritten: unknown[] }) => x.rewritten.length > 0);
  const f = m.frames[frame];
  f.rewritten[1] += 1; // flat on disk: [index, bytes, …]
  f.originalBytes += 1;
  m.originalBytes += 1;
  fs.writeFileSync(layout.manifest, JSON.stringify(m));
  return { exec, frame };
}
