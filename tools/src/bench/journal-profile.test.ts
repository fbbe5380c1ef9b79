import { describe, expect, it } from "vitest";
import { profileJournal, profileTable, shareOf } from "./journal-profile.js";

const line = (type: string, data: unknown): string => `${JSON.stringify({ id: "1-a", timestamp: "2026-03-05T12:00:00.000Z", type, data })}\n`;

describe("profileJournal", () => {
  const body = "x".repeat(200);
  const text =
    line("tool.result", { result: body }) +
    line("tool.result", { result: body }) +
    line("token.usage", { inputTokens: 1 }) +
    line("file.updated", { path: "a", content: "y".repeat(300) }) +
    line("file.updated", { path: "a", sha256: "0".repeat(64), bytes: 3 }) +
    "{not json\n" +
    '{"torn":';
  const p = profileJournal(Buffer.from(text));

  it("counts complete lines by type, by count and by bytes (the torn tail is not a line)", () => {
    expect(p.lines).toBe(6);
    expect(p.types["tool.result"].count).toBe(2);
    expect(p.types["(unparsable)"].count).toBe(1);
    expect(p.bytes).toBe(Buffer.byteLength(text) - '{"torn":'.length);
    expect(shareOf(p, "tool.result", "count")).toBeCloseTo(2 / 6);
    expect(shareOf(p, "token.usage", "bytes")).toBeCloseTo(Buffer.byteLength(line("token.usage", { inputTokens: 1 })) / p.bytes);
    expect(shareOf(p, "state.snapshot", "count")).toBe(0);
  });

  it("measures bodies per field, their repeats, and inline against hashed file.updated", () => {
    expect(p.fields["tool.result .result"]).toMatchObject({ count: 2, bytes: 400, p50: 200, max: 200 });
    expect(p.fields["file.updated .content"]).toMatchObject({ count: 1, bytes: 300 });
    expect(p.fields["file.updated .sha256"]).toBeUndefined(); // 64 chars: not a body
    expect(p.bodies).toMatchObject({ count: 3, bytes: 700, repeatCount: 1, repeatBytes: 200, max: 300 });
    expect(p.fileUpdated).toEqual({ inline: 1, hashed: 1 });
  });

  it("renders one comparison row per journal with the zstd ratios or n/a", () => {
    const t = profileTable([{ name: "x", profile: p, zstd3Ratio: 8.3, zstd19Ratio: null, eventSchemaVersion: 2 }]);
    expect(t).toHaveLength(2);
    expect(t[0][0]).toBe("journal");
    expect(t[1]).toContain("8.30:1");
    expect(t[1]).toContain("n/a");
    expect(t[1][1]).toBe("v2, inline bodies");
  });
});
