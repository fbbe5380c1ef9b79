/**
 * fast-check arbitraries of journals for diet property tests: canonical lines with bodies at and
 * around the 4,096-byte threshold (multi-byte and escaped characters included), duplicate bodies,
 * lines the proof must refuse (duplicate keys, `\u00e9` and `\/` escapes, lone surrogates),
 * blank, corrupt and invalid-UTF-8 lines, and a missing final newline. Each line says what the
 * diet must do with it, so tests can check more than the round trip.
 */
import fc from "fast-check";

/** One generated line: bytes without `\n`, and whether a compatible/extended diet must move a body. */
export interface GenLine {
  bytes: Buffer;
  /** "move": canonical with a body ≥ 4096 at a site; "keep": must stay verbatim; "any": no claim. */
  compatible: "move" | "keep" | "any";
  extended: "move" | "keep" | "any";
}

const FILLERS = ["x", "é", "😀", "\n", '"', "\\", "ü", " "];

/** A body of exactly `bytes` UTF-8 bytes (pads with ASCII after multi-byte picks). */
function bodyOfBytes(seed: number[], bytes: number): string {
  let s = "";
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const f = FILLERS[seed[i % seed.length] % FILLERS.length];
    const fb = Buffer.byteLength(f);
    if (n + fb > bytes) {
      s += "x".repeat(bytes - n);
      break;
    }
    s += f;
    n += fb;
  }
  return s;
}

let counter = 0;
function envelope(type: string, data: unknown): string {
  const ms = 1772736515931 + counter++;
  return JSON.stringify({ id: `${ms}-k${counter.toString(36)}`, timestamp: new Date(ms).toISOString(), type, data });
}

const bodySize = fc.oneof(
  fc.constantFrom(4094, 4095, 4096, 4097, 4098),
  fc.integer({ min: 3000, max: 9000 }),
  fc.integer({ min: 1, max: 200 }),
);
const seedArb = fc.array(fc.nat(50), { minLength: 1, maxLength: 8 });

function moveIfBig(line: string, body: string): "move" | "keep" {
  return Buffer.byteLength(line) >= 4096 && Buffer.byteLength(body) >= 4096 ? "move" : "keep";
}

/** Canonical body-carrying lines at the compatible sites. */
const compatibleSiteLine = fc.tuple(fc.constantFrom("file.updated", "state.snapshot"), seedArb, bodySize).map(([type, seed, size]): GenLine => {
  const body = bodyOfBytes(seed, size);
  const line = type === "file.updated"
    ? envelope(type, { path: "src/a.ts", filename: "a.ts", content: body, at: 1 })
    : envelope(type, { completedCodons: [], recentFileAccess: { path: "p.md", content: body, size: body.length } });
  const m = moveIfBig(line, body);
  return { bytes: Buffer.from(line), compatible: m, extended: m };
});

/** Canonical lines at the extended-only sites. */
const extendedSiteLine = fc.tuple(fc.constantFrom("assistant.action", "tool.result", "sentinel.output"), seedArb, bodySize).map(([type, seed, size]): GenLine => {
  const body = bodyOfBytes(seed, size);
  const key = type === "tool.result" ? "result" : "content";
  const line = envelope(type, { codonId: "c1", [key]: body, isError: false });
  return { bytes: Buffer.from(line), compatible: "keep", extended: moveIfBig(line, body) };
});

/** Lines that carry a big body but whose proof must fail. */
const proofFailLine = fc.tuple(fc.constantFrom("dupkey", "u00e9", "slash", "surrogate", "spaces"), seedArb).map(([kind, seed]): GenLine => {
  const body = bodyOfBytes(seed, 5000);
  const esc = JSON.stringify(body);
  const head = `{"id":"1-a","timestamp":"2026-03-05T12:00:00.000Z","type":"file.updated","data":{"path":"a"`;
  let line: string;
  if (kind === "dupkey") line = `${head},"content":${esc},"content":${esc}}}`;
  else if (kind === "u00e9") line = `${head},"content":${esc.slice(0, -1)}\\u00e9"}}`;
  else if (kind === "slash") line = `${head},"content":${esc.slice(0, -1)}\\/"}}`;
  else if (kind === "surrogate") line = `${head},"content":${esc.slice(0, -1)}\\ud800"}}`;
  else line = `${head}, "content": ${esc}}}`;
  return { bytes: Buffer.from(line), compatible: "keep", extended: "keep" };
});

const otherLine = fc.oneof(
  fc.constant<GenLine>({ bytes: Buffer.alloc(0), compatible: "keep", extended: "keep" }),
  fc.constantFrom(" ", "\t", "\r").map((s): GenLine => ({ bytes: Buffer.from(s), compatible: "keep", extended: "keep" })),
  fc.string({ maxLength: 60 }).map((s): GenLine => ({ bytes: Buffer.from(envelope("info", { message: s })), compatible: "keep", extended: "keep" })),
  fc.string({ maxLength: 40 }).map((s): GenLine => ({ bytes: Buffer.from(`{"id":"corrupt ${s}`), compatible: "keep", extended: "keep" })),
  fc.uint8Array({ minLength: 1, maxLength: 30 }).map((u): GenLine => ({
    bytes: Buffer.concat([Buffer.from('{"id":"9","timestamp":"t","type":"file.updated","data":"'), Buffer.from(u).map((b) => (b === 10 ? 0xff : b)), Buffer.from('"}')]),
    compatible: "keep",
    extended: "keep",
  })),
);

/** A journal: lines (some repeated verbatim to make duplicate bodies) and an optional torn tail. */
export const journalArb = fc
  .tuple(
    fc.array(fc.oneof({ weight: 3, arbitrary: compatibleSiteLine }, { weight: 2, arbitrary: extendedSiteLine }, { weight: 1, arbitrary: proofFailLine }, { weight: 3, arbitrary: otherLine }), { maxLength: 25 }),
    fc.array(fc.nat(), { maxLength: 4 }),
    fc.boolean(),
  )
  .map(([lines, dupIdx, torn]) => {
    const all = [...lines];
    for (const i of dupIdx) if (lines.length > 0) all.push(lines[i % lines.length]);
    // The unterminated final fragment is never rewritten (format §5.1), whatever it holds.
    if (torn && all.length > 0) all[all.length - 1] = { ...all[all.length - 1], compatible: "keep", extended: "keep" };
    const parts = all.map((l, i) => (torn && i === all.length - 1 ? l.bytes : Buffer.concat([l.bytes, Buffer.from("\n")])));
    return { lines: all, bytes: Buffer.concat(parts), torn: torn && all.length > 0 };
  });
