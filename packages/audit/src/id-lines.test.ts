import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IdLines } from "./id-lines.js";

describe("IdLines", () => {
  it("answers as a Map of first lines does, for any id sequence (collisions and growth included)", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.string({ unit: "grapheme" }), fc.constantFrom("a", "b", "1772798564631-tl5iwxyjy")), { maxLength: 3000 }), (ids) => {
        const t = new IdLines();
        const m = new Map<string, number>();
        ids.forEach((id, line) => {
          const first = m.get(id);
          if (first === undefined) m.set(id, line);
          expect(t.firstLine(id, line)).toBe(first ?? -1);
        });
        expect(t.size).toBe(m.size);
      }),
      { numRuns: 200 },
    );
  });

  it("keeps 100,000 distinct ids apart and finds each again", () => {
    const t = new IdLines();
    const wrong: number[] = [];
    for (let i = 0; i < 100_000; i++) if (t.firstLine(`id-${i}`, i) !== -1) wrong.push(i);
    for (let i = 0; i < 100_000; i += 7) if (t.firstLine(`id-${i}`, -5) !== i) wrong.push(i);
    expect(wrong).toEqual([]);
    expect(t.size).toBe(100_000);
  });
});
