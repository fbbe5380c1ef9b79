import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONTENT_REF_MARKER } from "./body-sites.js";
import { indexOfMarker } from "./diet-scan.js";

// The scan's marker search must find exactly what `indexOf` of the whole marker finds.
const PIECES = ['"contentRef"', '"content', 'Ref"', "Ref", '"', "contentRef", '""contentRef""', "x", "\n", '"contentRe"', "f\""];

describe("indexOfMarker", () => {
  it("equals data.indexOf(CONTENT_REF_MARKER, from) for every start", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }), (parts) => {
        const data = Buffer.from(parts.join(""), "latin1");
        for (let from = 0; from <= data.length + 1; from++) {
          expect(indexOfMarker(data, from)).toBe(data.indexOf(CONTENT_REF_MARKER, from));
        }
      }),
      { numRuns: 300 },
    );
  });
});
