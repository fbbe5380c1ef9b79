import * as fs from "node:fs";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutOf, isSha256Hex } from "@hankweave-journal/core";
import { inspectZstd } from "@hankweave-journal/cas";
import { applyDiet } from "./diet.js";
import { openReader } from "./open-reader.js";
import { restoreJournal } from "./restore.js";
import { readManifest } from "./manifest.js";
import { copyExec, linesToBytes, rmExec, tempExec } from "./test-helpers.js";
import { decodeWithNodeZlib, nodeRuntime } from "./node-runtimes.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");
const PLAN_GEN = path.join(CONF, "plan-gen-execution");
const PLAN_GEN_SHA = "ca5db7e084ed9f86e5a5c82b5e6555ecfd64a5b2575ff3b5c7b306ab071c0830";

const present = fs.existsSync(PLAN_GEN);
if (!present) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error("missing");
    console.warn("skipped: ../shared/conformance absent");
    expect(fs.existsSync(PLAN_GEN)).toBe(false);
  });
}

// Nothing reads the conformance folder unless it is there (a user's clone has none).
describe.runIf(present)("compatibility with the zstd CLI and an independent rehydration", () => {
  let exec = "";
  let l = layoutOf("/nonexistent");
  let original = Buffer.alloc(0);
  beforeAll(() => {
    exec = copyExec(PLAN_GEN);
    l = layoutOf(exec);
    original = fs.readFileSync(l.journal);
  });
  afterAll(() => {
    if (exec !== "") rmExec(exec);
  });

  it("diets the plan-gen journal: 3 unique bodies ≥ 4096 bytes move to the CAS", async () => {
    expect(createHash("sha256").update(original).digest("hex")).toBe(PLAN_GEN_SHA);
    const r = await applyDiet(exec);
    expect(r.status).toBe("dieted");
    expect(r.originalSha256).toBe(PLAN_GEN_SHA);
    expect(r.bodies.unique).toBe(3);
    expect(fs.existsSync(l.journal)).toBe(false);
    const m = await readManifest(l);
    const text = fs.readFileSync(l.manifest, "utf8");
    // No sidecar: no eventSchemaVersion (format §5.1).
    expect(Object.keys(JSON.parse(text)).slice(0, 7)).toEqual([
      "schemaVersion", "dietVersion", "totalEvents", "originalSha256", "originalBytes", "segments", "dietedAt",
    ]);
    expect(m.framing).toBe("one-frame");
    const frames = inspectZstd(fs.readFileSync(l.dietedJournal));
    expect(frames.length).toBe(1);
    expect(frames[0].contentSize).toBe(m.frames!.reduce((n, f) => n + f.pointerBytes!, 0));
    expect(m.totalEvents).toBe(6467);
    expect(m.segments).toEqual([{ id: 0, events: 6467 }]);
  });

  it("zstd -d gives the pointer lines: the original lines except the rewritten ones", () => {
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", l.dietedJournal], { maxBuffer: 1 << 30 });
    const pl = pointer.toString("utf8").split("\n");
    const ol = original.toString("utf8").split("\n");
    expect(pl.length).toBe(ol.length);
    let differing = 0;
    for (let i = 0; i < ol.length; i++) {
      if (pl[i] === ol[i]) continue;
      differing++;
      expect(pl[i]).toContain('"contentRef":{"sha256":"');
    }
    expect(differing).toBe(4); // 3 file.updated bodies + 1 state.snapshot repeating one of them
  });

  it("an independent rehydration (JSON.parse + zstd -d of each blob) rebuilds bytes with the original SHA-256", async () => {
    const m = await readManifest(l);
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", l.dietedJournal], { maxBuffer: 1 << 30 }).toString("utf8");
    const rebuilt = pointer.split("\n").map((line) => {
      if (!line.includes('"contentRef"')) return line;
      const ev = JSON.parse(line);
      const fix = (o: Record<string, unknown>): Record<string, unknown> => {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(o)) {
          const ref = v as { sha256?: string; ref?: string };
          if (k === "contentRef" && ref.ref === "cas" && isSha256Hex(ref.sha256)) {
            out.content = execFileSync("zstd", ["-d", "-c", "-q", l.casBlob(ref.sha256)]).toString("utf8");
          } else if (v && typeof v === "object" && !Array.isArray(v)) out[k] = fix(v as Record<string, unknown>);
          else out[k] = v;
        }
        return out;
      };
      return JSON.stringify(fix(ev));
    }).join("\n");
    expect(createHash("sha256").update(rebuilt).digest("hex")).toBe(m.originalSha256);
  });

  it("cat-like reads through openReader give the original bytes, then restore links them back", async () => {
    const reader = await openReader(exec);
    expect(reader.kind).toBe("dieted");
    expect((await linesToBytes(reader)).equals(original)).toBe(true);
    const info = await reader.info();
    expect(info.bytes).toBe(original.length);
    expect(info.storedBytes).toBeLessThan(original.length / 4);
    await reader.close();
    expect((await restoreJournal(exec)).status).toBe("restored");
    expect(fs.readFileSync(l.journal).equals(original)).toBe(true);
    expect(fs.existsSync(l.dietedJournal) && fs.existsSync(l.manifest)).toBe(true);
    expect((await restoreJournal(exec)).status).toBe("already-restored");
  });

  it("reads a foreign single-frame .zst without a seek table (as the reference runtime writes it)", async () => {
    const foreign = copyExec(exec);
    try {
      const fl = layoutOf(foreign);
      fs.rmSync(fl.journal);
      const pointer = execFileSync("zstd", ["-d", "-c", "-q", fl.dietedJournal], { maxBuffer: 1 << 30 });
      fs.writeFileSync(fl.dietedJournal, execFileSync("zstd", ["-3", "-c", "-q"], { input: pointer, maxBuffer: 1 << 30 }));
      const m = JSON.parse(fs.readFileSync(fl.manifest, "utf8"));
      delete m.frames;
      delete m.lines;
      delete m.bodies;
      delete m.endsWithNewline;
      delete m.framing;
      fs.writeFileSync(fl.manifest, JSON.stringify(m));
      const reader = await openReader(foreign);
      expect((await linesToBytes(reader)).equals(original)).toBe(true);
      expect((await reader.getLine(3000))?.offset).toBe(original.subarray(0).toString("latin1").split("\n").slice(0, 3000).join("\n").length + 1);
      await reader.close();
      expect((await restoreJournal(foreign)).status).toBe("restored");
      expect(fs.readFileSync(fl.journal).equals(original)).toBe(true);
    } finally {
      rmExec(foreign);
    }
  });
});

/** A generated journal of about `bytes` (finished run, ~700-byte lines, some file.updated bodies ≥ 4096 bytes). */
function generatedJournal(bytes: number): Buffer {
  let seed = 12345;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words = ["alpha", "beta", "gamma", "delta", "const", "return", "await", "value", "index", "journal", "state", "codon"];
  const text = (n: number): string => {
    const out: string[] = [];
    let len = 0;
    while (len < n) {
      const w = words[Math.floor(rnd() * words.length)] + (rnd() < 0.2 ? String(Math.floor(rnd() * 1e6)) : "");
      out.push(w);
      len += w.length + 1;
    }
    return out.join(rnd() < 0.5 ? " " : "\n");
  };
  const bodies = Array.from({ length: 24 }, () => text(6000));
  const lines: string[] = [];
  let total = 0;
  const push = (type: string, data: unknown): void => {
    const line = JSON.stringify({ id: `e${lines.length}`, timestamp: new Date(1772736516000 + lines.length).toISOString(), type, data });
    lines.push(line);
    total += line.length + 1;
  };
  push("state.transition", { transition: { type: "RunStarted", runId: "r1" } });
  while (total < bytes) {
    if (lines.length % 40 === 0) push("file.updated", { path: "src/a.ts", filename: "a.ts", content: bodies[Math.floor(rnd() * bodies.length)] });
    else push("assistant.action", { content: text(600) });
  }
  push("state.transition", { transition: { type: "RunCompleted", runId: "r1" } });
  return Buffer.from(lines.join("\n") + "\n");
}

describe("the compatible diet decodes completely with node:zlib of the Node versions the reference runtime runs on", () => {
  const made: string[] = [];
  /** zst path → what the zstd CLI decodes it to (an independent decoder). */
  const expected = new Map<string, { bytes: number; sha256: string }>();
  let seekableZst = "";
  afterAll(() => {
    for (const d of made) rmExec(d);
  });

  const sum = (b: Buffer): { bytes: number; sha256: string } => ({ bytes: b.length, sha256: createHash("sha256").update(b).digest("hex") });

  beforeAll(async () => {
    const sources: string[] = [];
    if (fs.existsSync(CONF)) {
      for (const name of fs.readdirSync(CONF).sort()) {
        if (fs.existsSync(layoutOf(path.join(CONF, name)).journal)) sources.push(copyExec(path.join(CONF, name)));
      }
    }
    const big = generatedJournal(12 * 1024 * 1024);
    sources.push(tempExec(big));
    const bigSeekable = tempExec(big);
    made.push(...sources, bigSeekable);
    for (const exec of sources) {
      await applyDiet(exec, { force: true });
      const zst = layoutOf(exec).dietedJournal;
      expected.set(zst, sum(execFileSync("zstd", ["-d", "-c", "-q", zst], { maxBuffer: 1 << 30 })));
    }
    await applyDiet(bigSeekable, { force: true, kind: "seekable" });
    seekableZst = layoutOf(bigSeekable).dietedJournal;
    expected.set(seekableZst, sum(execFileSync("zstd", ["-d", "-c", "-q", seekableZst], { maxBuffer: 1 << 30 })));
  }, 120_000);

  it("writes every compatible diet as one frame with its content size (the generated one is over 8 MiB of pointer text)", async () => {
    expect(expected.size).toBe((fs.existsSync(CONF) ? 7 : 1) + 1);
    for (const [zst, want] of expected) {
      if (zst === seekableZst) continue;
      const frames = inspectZstd(fs.readFileSync(zst));
      expect(frames.length).toBe(1);
      expect(frames[0].contentSize).toBe(want.bytes);
    }
    const bigOne = [...expected].find(([zst]) => zst !== seekableZst && expected.get(zst)!.bytes > 8 * 1024 * 1024);
    expect(bigOne).toBeDefined();
    expect(inspectZstd(fs.readFileSync(seekableZst)).filter((f) => !f.skippable).length).toBeGreaterThan(1);
  });

  for (const major of [22, 24]) {
    it(`Node ${major}: zstdDecompressSync and createZstdDecompress give every byte of every compatible diet`, (ctx) => {
      const node = nodeRuntime(major);
      if (node.bin === null) {
        console.warn(`skipped: Node ${major} is absent: these tests cannot run (${node.reason})`);
        ctx.skip();
        return;
      }
      const files = [...expected.keys()];
      const got = decodeWithNodeZlib(node.bin, files);
      expect(got.length).toBe(files.length);
      for (const r of got) {
        const want = expected.get(r.file)!;
        if (r.file === seekableZst) {
          // --seekable (independent frames): Node ≥ 24 reads it all; Node 22 stops after the first
          // frame (nodejs/node #64741) — why it is not the default and its --help says so.
          if (major >= 24) expect({ file: r.file, sync: r.sync, stream: r.stream }).toEqual({ file: r.file, sync: want, stream: want });
          else expect(["error" in r.sync ? -1 : r.sync.bytes]).not.toEqual([want.bytes]);
          continue;
        }
        expect({ file: r.file, sync: r.sync, stream: r.stream }).toEqual({ file: r.file, sync: want, stream: want });
      }
    }, 240_000);
  }
});
