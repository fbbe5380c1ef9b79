import { describe, expect, it } from "vitest";
import { diffStates } from "./diff-state.js";

describe("diffStates", () => {
  it("names differing leaves with state paths", () => {
    const a = { runs: [{ codons: [{ endTime: "x" }, { endTime: "y" }] }], currentRunId: null };
    const b = { runs: [{ codons: [{ endTime: "x" }, { endTime: "z" }] }], currentRunId: null };
    expect(diffStates(a, b)).toEqual([{ path: "runs[0].codons[1].endTime", kind: "value", expected: "y", actual: "z" }]);
  });

  it("reports missing and extra keys and array elements", () => {
    expect(diffStates({ a: 1, b: [1, 2] }, { c: 2, b: [1] }).map((d) => [d.path, d.kind])).toEqual([
      ["a", "missing"], ["b[1]", "missing"], ["c", "extra"],
    ]);
  });

  it("treats a different key order as a difference (state.json is compared byte for byte)", () => {
    expect(diffStates({ a: 1, b: 2 }, { b: 2, a: 1 })).toEqual([{ path: "(root)", kind: "key-order", expected: ["a", "b"], actual: ["b", "a"] }]);
  });

  it("is empty for equal values and quotes odd keys", () => {
    expect(diffStates({ x: [1, { y: null }] }, { x: [1, { y: null }] })).toEqual([]);
    expect(diffStates({ "a-b": 1 }, { "a-b": 2 })[0].path).toBe('["a-b"]');
  });
});
