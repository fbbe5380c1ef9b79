/**
 * Rehydration of pointer lines: each `"<key>Ref":{"sha256":…,"bytes":…,"encoding":"utf-8","ref":"cas"}`
 * is replaced, as text, by `"<key>":` + the JSON-escaped body. Pure. Because diet only rewrites
 * canonical lines (JSON.stringify output), this text splice restores the original bytes exactly.
 */
import { JournalError, isSha256Hex } from "@hankweave-journal/core";

/** One pointer found in a line: character span, key, sha and body size. */
export interface PointerSpan {
  start: number;
  end: number;
  key: string;
  sha256: string;
  bytes: number;
}

/**
 * A pointer's text. The sha is matched loosely so a hostile value (`../`, upper case) is found and
 * rejected, not ignored. Global: reset `lastIndex` before each scan.
 */
export const POINTER_RE = /"(content|toolInput|result)Ref":\{"sha256":"((?:[^"\\]|\\.)*)","bytes":(\d+),"encoding":"utf-8","ref":"cas"\}/g;

/** Cheap pre-check on raw bytes before the regex: lines without `Ref":{"sha256":` hold no pointer. */
export const POINTER_MARKER = Buffer.from('Ref":{"sha256":"', "latin1");

/**
 * Every pointer in `text`, in order. Throws CAS_BAD_REF for a pointer whose sha is not 64
 * lowercase hex (it would otherwise name a path outside the CAS).
 */
export function findPointers(text: string): PointerSpan[] {
  const out: PointerSpan[] = [];
  POINTER_RE.lastIndex = 0;
  for (let m = POINTER_RE.exec(text); m !== null; m = POINTER_RE.exec(text)) {
    const sha = m[2];
    if (!isSha256Hex(sha)) {
      throw new JournalError("CAS_BAD_REF", `contentRef sha256 is not 64 lowercase hex: ${JSON.stringify(sha).slice(0, 80)}`, {
        actual: sha,
        expected: "64 lowercase hex characters",
      });
    }
    const bytes = Number(m[3]);
    if (!Number.isSafeInteger(bytes)) {
      throw new JournalError("CAS_BAD_REF", `contentRef bytes is not a safe integer: ${m[3]}`, { actual: m[3] });
    }
    out.push({ start: m.index, end: m.index + m[0].length, key: m[1], sha256: sha, bytes });
  }
  return out;
}

/**
 * Every pointer-shaped span of `text`, in order, without judging its sha (never throws): for
 * readers of a diet made by the reference runtime, where only the span at a body site is a
 * pointer and the others are data.
 */
export function findPointerCandidates(text: string): PointerSpan[] {
  const out: PointerSpan[] = [];
  POINTER_RE.lastIndex = 0;
  for (let m = POINTER_RE.exec(text); m !== null; m = POINTER_RE.exec(text)) {
    out.push({ start: m.index, end: m.index + m[0].length, key: m[1], sha256: m[2], bytes: Number(m[3]) });
  }
  return out;
}

/**
 * Replace each pointer span by `"<key>":` + JSON.stringify(body). `bodyOf` returns the body text
 * (already verified by the caller); a missing body throws CAS_MISSING.
 */
export function spliceBodies(text: string, pointers: readonly PointerSpan[], bodyOf: (sha: string) => string | undefined): string {
  if (pointers.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const p of pointers) {
    const body = bodyOf(p.sha256);
    if (body === undefined) throw new JournalError("CAS_MISSING", `no body for ${p.sha256}`, { expected: p.sha256 });
    parts.push(text.slice(at, p.start), `"${p.key}":`, JSON.stringify(body));
    at = p.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

/**
 * Byte-level `spliceBodies` for readers: `pointer` is the raw line, `escapedOf(sha)` the body
 * already JSON-escaped as UTF-8 bytes. Spans are found on the latin1 view of the bytes (the
 * pointer syntax is ASCII), so no full-line UTF-8 decode or encode happens.
 */
export function spliceBodyBytes(
  pointer: Buffer,
  escapedOf: (sha: string) => Buffer,
  spans: readonly PointerSpan[] = findPointers(pointer.toString("latin1")),
): Buffer {
  if (spans.length === 0) return pointer;
  const parts: Buffer[] = [];
  let at = 0;
  for (const p of spans) {
    parts.push(pointer.subarray(at, p.start), Buffer.from(`"${p.key}":`, "latin1"), escapedOf(p.sha256));
    at = p.end;
  }
  parts.push(pointer.subarray(at));
  return Buffer.concat(parts);
}
