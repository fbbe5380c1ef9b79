/**
 * Hostile dieted journals (family `dieted`): lying manifests, broken or bomb zstd, half pairs,
 * missing or corrupt CAS blobs, and pointer journals whose contentRefs lie (`../` refs, a wrong
 * sha, huge byte counts). Each starts from a diet of the finished fixture made once per process.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { compressZstd, decompressZstd } from "@hankweave-journal/cas";
import { dietedExec } from "../executions.js";

/** One dieted variant: build `root/exec` from the dieted template (made under `template`). */
export interface DietedVariant {
  name: string;
  make(root: string, template: string): Promise<string>;
}

function editManifest(exec: string, edit: (m: Record<string, unknown>) => void): void {
  const p = layoutOf(exec).manifest;
  const m = JSON.parse(fs.readFileSync(p, "utf8")) as Record<string, unknown>;
  edit(m);
  fs.writeFileSync(p, JSON.stringify(m));
}

function blobs(exec: string): string[] {
  const cas = layoutOf(exec).casDir;
  return fs.readdirSync(cas).sort().flatMap((d) => fs.readdirSync(path.join(cas, d)).sort().map((f) => path.join(cas, d, f)));
}

/** Rewrite the pointer journal's text as one plain zstd frame, as the reference runtime writes it. */
async function editPointers(exec: string, edit: (text: string) => string): Promise<void> {
  const p = layoutOf(exec).dietedJournal;
  const text = (await decompressZstd(fs.readFileSync(p), { maxBytes: 64 << 20 })).toString("utf8");
  fs.writeFileSync(p, await compressZstd(Buffer.from(edit(text), "utf8"), 3));
  // One frame without a seek table is how the reference runtime writes it: its manifest indexes no frames.
  editManifest(exec, (m) => { delete m.frames; });
}

/** A zstd frame header claiming `size` decompressed bytes, with a tiny body (a "bomb" claim). */
function bombFrame(size: bigint): Buffer {
  // magic, frame header descriptor (single segment, 8-byte content size), content size, then a raw block of 1 byte (last).
  const h = Buffer.alloc(4 + 1 + 8);
  h.writeUInt32LE(0xfd2fb528, 0);
  h[4] = 0xe0; // FCS_Field_Size=3 (8 bytes), Single_Segment_flag=1
  h.writeBigUInt64LE(size, 5);
  const block = Buffer.from([0x09, 0x00, 0x00, 0x41]); // Last_Block=1, Raw, size 1, "A"
  return Buffer.concat([h, block]);
}

export const DIETED_VARIANTS: DietedVariant[] = [
  { name: "ok", make: (r, t) => dietedExec(r, t) },
  { name: "manifest-malformed", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(layoutOf(e).manifest, "{not json"); return e; } },
  { name: "manifest-wrong-sha", make: async (r, t) => { const e = await dietedExec(r, t); editManifest(e, (m) => { m.originalSha256 = "0".repeat(64); }); return e; } },
  { name: "manifest-wrong-bytes", make: async (r, t) => { const e = await dietedExec(r, t); editManifest(e, (m) => { m.originalBytes = Number(m.originalBytes) + 1; }); return e; } },
  { name: "manifest-huge-bytes", make: async (r, t) => { const e = await dietedExec(r, t); editManifest(e, (m) => { m.originalBytes = 2 ** 52; }); return e; } },
  { name: "zst-truncated", make: async (r, t) => { const e = await dietedExec(r, t); const b = fs.readFileSync(layoutOf(e).dietedJournal); fs.writeFileSync(layoutOf(e).dietedJournal, b.subarray(0, Math.floor(b.length / 2))); return e; } },
  { name: "zst-garbage", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(layoutOf(e).dietedJournal, Buffer.from("this is not zstd at all, just text\n".repeat(20))); return e; } },
  { name: "zst-empty", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(layoutOf(e).dietedJournal, ""); return e; } },
  { name: "zst-bomb-claim", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(layoutOf(e).dietedJournal, bombFrame(1n << 40n)); return e; } },
  { name: "half-pair-zst-only", make: async (r, t) => { const e = await dietedExec(r, t); fs.rmSync(layoutOf(e).manifest); return e; } },
  { name: "half-pair-manifest-only", make: async (r, t) => { const e = await dietedExec(r, t); fs.rmSync(layoutOf(e).dietedJournal); return e; } },
  { name: "cas-missing", make: async (r, t) => { const e = await dietedExec(r, t); fs.rmSync(blobs(e)[0]); return e; } },
  { name: "cas-wrong-content", make: async (r, t) => { const e = await dietedExec(r, t); const [a, b] = blobs(e); fs.copyFileSync(b, a); return e; } },
  { name: "cas-garbage", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(blobs(e)[0], "garbage"); return e; } },
  { name: "cas-bomb-claim", make: async (r, t) => { const e = await dietedExec(r, t); fs.writeFileSync(blobs(e)[0], bombFrame(1n << 40n)); return e; } },
  { name: "ref-dotdot", make: async (r, t) => { const e = await dietedExec(r, t); await editPointers(e, (s) => s.replace(/"sha256":"[0-9a-f]{64}"/, '"sha256":"../../../../outside/sentinel"')); return e; } },
  { name: "ref-wrong-sha", make: async (r, t) => { const e = await dietedExec(r, t); await editPointers(e, (s) => s.replace(/"sha256":"[0-9a-f]{64}"/, `"sha256":"${"ab".repeat(32)}"`)); return e; } },
  { name: "ref-huge-bytes", make: async (r, t) => { const e = await dietedExec(r, t); await editPointers(e, (s) => s.replace(/"bytes":\d+/, '"bytes":9007199254740991')); return e; } },
  { name: "ref-not-cas", make: async (r, t) => { const e = await dietedExec(r, t); await editPointers(e, (s) => s.replace('"ref":"cas"', '"ref":"file:///etc/passwd"')); return e; } },
];
