// Fuzzing (issue 14): fast-check mutations — bit flips, truncations, splices, insertions — of a
// real plain journal, its dieted pair (pointer journal with its seek table, manifest, CAS blobs),
// its sidecar and a state.json; the transparent reader and the commands must never throw an
// uncoded error, print a stack trace or hang. `npm test` runs FUZZ_RUNS (default 200);
// `npm run test:fuzz` runs 10,000.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { isJournalError, layoutOf } from "@hankweave-journal/core";
import { openReader } from "@hankweave-journal/diet";
import { memoryIO, runCli } from "@hankweave-journal/cli";
import { dietedExec, finishedExec } from "./executions.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const ITERATION_TIMEOUT_MS = 20_000;
const root = fs.mkdtempSync(path.join(os.tmpdir(), "hw-fuzz-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

type Mutation =
  | { op: "flip"; at: number; bit: number }
  | { op: "truncate"; at: number }
  | { op: "splice"; from: number; len: number; to: number }
  | { op: "insert"; at: number; bytes: Uint8Array };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("flip" as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant("splice" as const), from: fc.double({ min: 0, max: 1, noNaN: true }), len: fc.integer({ min: 1, max: 4096 }), to: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.double({ min: 0, max: 1, noNaN: true }), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
);

/** Apply the mutations to a copy of `b`. */
export function mutate(b: Buffer, ms: Mutation[]): Buffer {
  let out = Buffer.from(b);
  const pos = (f: number): number => Math.min(out.length, Math.floor(f * out.length));
  for (const m of ms) {
    if (m.op === "flip" && out.length > 0) out[Math.min(out.length - 1, pos(m.at))] ^= 1 << m.bit;
    else if (m.op === "truncate") out = out.subarray(0, pos(m.at));
    else if (m.op === "splice") {
      const from = pos(m.from);
      const piece = Buffer.from(out.subarray(from, from + m.len));
      const to = pos(m.to);
      out = Buffer.concat([out.subarray(0, to), piece, out.subarray(to)]);
    } else if (m.op === "insert") {
      const at = pos(m.at);
      out = Buffer.concat([out.subarray(0, at), Buffer.from(m.bytes), out.subarray(at)]);
    }
  }
  return out;
}

/** Every file of the two base executions, by role, relative to the exec. */
interface Base { kind: "plain" | "dieted"; files: Map<string, Buffer> }
function filesOf(exec: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      if (fs.statSync(p).isDirectory()) walk(p);
      else out.set(path.relative(exec, p), fs.readFileSync(p));
    }
  };
  walk(exec);
  return out;
}

const COMMANDS: ((e: string) => string[])[] = [
  (e) => ["cat", e], (e) => ["stats", e, "--json"], (e) => ["verify", e, "--deep"], (e) => ["audit", e], (e) => ["rebuild", e],
  (e) => ["restore", e], (e) => ["index", e], (e) => ["summary", e], (e) => ["state", e], (e) => ["diet", e, "--dry-run"],
];

describe(`fuzzing the reader and the commands (${RUNS} runs)`, () => {
  it("never throws an uncoded error, never prints a stack trace, never hangs", async () => {
    const plain = finishedExec(path.join(root, "base-plain"));
    fs.writeFileSync(layoutOf(plain).state, "{\"runs\":[]}");
    await runCli(["repair", plain], memoryIO()); // writes a real sidecar
    const dieted = await dietedExec(path.join(root, "base-dieted"), root);
    const bases: Base[] = [{ kind: "plain", files: filesOf(plain) }, { kind: "dieted", files: filesOf(dieted) }];
    let n = 0;
    const started = performance.now();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: bases.length - 1 }), fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: COMMANDS.length - 1 }),
        async (bi, fileIndex, ms, ci) => {
          const b = bases[bi];
          const names = [...b.files.keys()].sort();
          const target = names[fileIndex % names.length];
          const exec = path.join(root, `it-${n++}`);
          if (process.env.FUZZ_LOG && n % 250 === 0) fs.appendFileSync(process.env.FUZZ_LOG, `${n} ${((performance.now() - started) / 1000).toFixed(1)}\n`);
          for (const [rel, bytes] of b.files) {
            fs.mkdirSync(path.dirname(path.join(exec, rel)), { recursive: true });
            fs.writeFileSync(path.join(exec, rel), rel === target ? mutate(bytes, ms) : bytes);
          }
          try {
            // The reader: every line and event, or a JournalError.
            const readerProblem = await (async (): Promise<string | null> => {
              try {
                const r = await openReader(exec);
                try {
                  for await (const _l of r.lines()) void _l;
                  for await (const _e of r.events({ onFinding: () => undefined })) void _e;
                } finally {
                  await r.close();
                }
                return null;
              } catch (e) {
                return isJournalError(e) ? null : `reader threw an uncoded ${(e as Error)?.name}: ${(e as Error)?.message}`;
              }
            })();
            expect(readerProblem, `${b.kind} ${target} ${JSON.stringify(ms)}`).toBeNull();
            const io = memoryIO();
            let timer: NodeJS.Timeout | undefined;
            const code = await Promise.race([runCli(COMMANDS[ci](exec), io), new Promise<"hang">((r) => { timer = setTimeout(() => r("hang"), ITERATION_TIMEOUT_MS); })]);
            clearTimeout(timer);
            const where = `${COMMANDS[ci](exec)[0]} on ${b.kind} with ${target} mutated by ${JSON.stringify(ms)}`;
            expect(code, where).not.toBe("hang");
            expect([0, 1], where).toContain(code);
            expect(io.err(), where).not.toMatch(/internal error|^\s+at .+:\d+:\d+\)?$/m);
            if (code === 1) expect(io.err() + io.out(), where).toMatch(/^(error|warning)\s+[A-Z][A-Z0-9_]+\b/m);
          } finally {
            fs.rmSync(exec, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED ?? 14), endOnFailure: true },
    );
    const ms = performance.now() - started;
    console.log(`fuzz: ${n} iterations in ${(ms / 1000).toFixed(1)} s`);
    expect(n).toBeGreaterThanOrEqual(RUNS);
  }, 3_600_000);
});
