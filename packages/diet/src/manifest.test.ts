import { describe, expect, it } from "vitest";
import { checkRewritten, parseManifest, serializeManifest, type DietManifest } from "./manifest.js";

const base: DietManifest = {
  schemaVersion: 1, dietVersion: 1, eventSchemaVersion: 2, totalEvents: 3, originalSha256: "a".repeat(64),
  originalBytes: 300, segments: [{ id: 0, events: 3 }], dietedAt: "2026-03-05T12:00:00.000Z",
  lines: 4, endsWithNewline: true, bodies: { moved: 1, unique: 1, movedBytes: 5000 },
  frames: [
    { firstLine: 0, lines: 3, originalOffset: 0, originalBytes: 200, pointerBytes: 150, rewritten: [1, 120] },
    { firstLine: 3, lines: 1, originalOffset: 200, originalBytes: 100, pointerBytes: 100, rewritten: [] },
  ],
  framing: "one-frame",
};

function codeOf(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    return (e as { code: string }).code;
  }
}

describe("journal.meta.json", () => {
  it("serializes the format §5.1 keys first, in order, then our extras, and parses back", () => {
    const text = serializeManifest(base);
    expect(Object.keys(JSON.parse(text))).toEqual([
      "schemaVersion", "dietVersion", "eventSchemaVersion", "totalEvents", "originalSha256", "originalBytes", "segments", "dietedAt",
      "lines", "endsWithNewline", "bodies", "framing", "frames",
    ]);
    expect(Object.keys(JSON.parse(text).frames[0])).toEqual(["firstLine", "lines", "originalOffset", "originalBytes", "pointerBytes", "rewritten"]);
    expect(parseManifest(text)).toEqual(base);
  });

  it("writes eventSchemaVersion only when the manifest has one (the sidecar had one), and reads manifests without it", () => {
    const none: DietManifest = { ...base, eventSchemaVersion: undefined };
    const text = serializeManifest(none);
    expect(text).not.toContain("eventSchemaVersion");
    expect(Object.keys(JSON.parse(text)).slice(0, 3)).toEqual(["schemaVersion", "dietVersion", "totalEvents"]);
    expect(parseManifest(text).eventSchemaVersion).toBeUndefined();
  });

  it("reads an index without framing (written before the one-frame diet) as seekable; a one-frame index needs every block's pointerBytes", () => {
    const disk = JSON.parse(serializeManifest(base));
    delete disk.framing;
    expect(parseManifest(JSON.stringify(disk)).framing).toBe("seekable");
    const noSizes = { ...JSON.parse(serializeManifest(base)), frames: [{ ...disk.frames[0], pointerBytes: undefined }, disk.frames[1]] };
    expect(codeOf(() => parseManifest(JSON.stringify(noSizes)))).toBe("MANIFEST_INVALID");
    expect(codeOf(() => parseManifest(JSON.stringify({ ...disk, framing: "many" })))).toBe("MANIFEST_INVALID");
  });

  it("writes each frame's rewritten lines flat ([index, bytes, …]) and still reads manifests written with pairs", () => {
    const disk = JSON.parse(serializeManifest(base));
    expect(disk.frames[0].rewritten).toEqual([1, 120]);
    expect(disk.frames[1].rewritten).toEqual([]);
    const legacy = { ...disk, frames: [{ ...disk.frames[0], rewritten: [[1, 120]] }, disk.frames[1]] };
    expect(JSON.stringify(legacy)).toContain('"rewritten":[[1,120]]');
    expect(parseManifest(JSON.stringify(legacy))).toEqual(base);
    const many = { ...base, frames: [{ ...base.frames![0], rewritten: [0, 7, 1, 120, 2, 4096] }, base.frames![1]] };
    expect(JSON.parse(serializeManifest(many)).frames[0].rewritten).toEqual([0, 7, 1, 120, 2, 4096]);
    expect(parseManifest(serializeManifest(many))).toEqual(many);
    const legacyMany = { ...disk, frames: [{ ...disk.frames[0], rewritten: [[0, 7], [1, 120], [2, 4096]] }, disk.frames[1]] };
    expect(parseManifest(JSON.stringify(legacyMany))).toEqual(many);
  });

  it("accepts a reference-runtime manifest without our extra keys", () => {
    const m = JSON.parse(serializeManifest(base));
    for (const k of ["lines", "endsWithNewline", "bodies", "frames"]) delete m[k];
    const parsed = parseManifest(JSON.stringify(m));
    expect(parsed.frames).toBeUndefined();
    expect(parsed.originalSha256).toBe(base.originalSha256);
  });

  it("rejects bad versions, shas, and frame indexes that do not add up", () => {
    const bad = (patch: Record<string, unknown>) => codeOf(() => parseManifest(JSON.stringify({ ...JSON.parse(serializeManifest(base)), ...patch })));
    expect(bad({ schemaVersion: 2 })).toBe("MANIFEST_INVALID");
    expect(bad({ dietVersion: 3 })).toBe("MANIFEST_INVALID");
    expect(bad({ originalSha256: "../x" })).toBe("MANIFEST_INVALID");
    expect(bad({ originalBytes: 301 })).toBe("MANIFEST_INVALID");
    expect(bad({ lines: 5 })).toBe("MANIFEST_INVALID");
    // A frame's rewritten list is checked before that frame is used (checkRewritten), not at parse:
    // a one-line read checks only its frame. Either way a bad list is MANIFEST_INVALID.
    const flat = (rewritten: unknown[]) => codeOf(() => {
      const m = parseManifest(JSON.stringify({ ...JSON.parse(serializeManifest(base)), frames: [{ ...base.frames![0], rewritten }, base.frames![1]] }));
      m.frames!.forEach((f, k) => checkRewritten(f, k));
    });
    expect(flat([1, 120])).toBe("ok");
    expect(flat([[1, 120]])).toBe("ok"); // pairs, flattened
    expect(flat([[2, 1], [1, 1]])).toBe("MANIFEST_INVALID");
    expect(flat([[3, 1]])).toBe("MANIFEST_INVALID");
    expect(flat([1])).toBe("MANIFEST_INVALID"); // odd length
    expect(flat([2, 1, 1, 1])).toBe("MANIFEST_INVALID"); // not increasing
    expect(flat([1, 1, 1, 1])).toBe("MANIFEST_INVALID"); // repeated index
    expect(flat([3, 1])).toBe("MANIFEST_INVALID"); // past the frame's lines
    expect(flat([-1, 1])).toBe("MANIFEST_INVALID");
    expect(flat([1, -1])).toBe("MANIFEST_INVALID");
    expect(flat([1, 1.5])).toBe("MANIFEST_INVALID");
    expect(flat(["1", 1])).toBe("MANIFEST_INVALID");
    expect(flat([0, 1, [1, 1]])).toBe("MANIFEST_INVALID"); // mixed shapes
    expect(flat([[0, 1], 1, 1])).toBe("MANIFEST_INVALID");
    expect(flat([[0, 1, 2]])).toBe("MANIFEST_INVALID");
    expect(bad({ frames: [{ ...base.frames![0], rewritten: "1,120" }, base.frames![1]] })).toBe("MANIFEST_INVALID");
    expect(codeOf(() => parseManifest("{"))).toBe("MANIFEST_INVALID");
  });
});
