import { describe, expect, it } from "vitest";
import { DIET_KINDS, isDietKind, kindOfManifest, manifestFieldsOf, movesExtendedSites } from "./diet-kind.js";
import { sitesOf } from "./body-sites.js";

describe("the diet kind (one name from flag to manifest)", () => {
  it("maps every kind to its manifest fields and back", () => {
    for (const kind of DIET_KINDS) {
      const f = manifestFieldsOf(kind);
      expect(kindOfManifest({ ...f, frames: [] })).toBe(kind);
    }
    expect(manifestFieldsOf("compatible")).toEqual({ dietVersion: 1, framing: "one-frame" });
    expect(manifestFieldsOf("seekable")).toEqual({ dietVersion: 1, framing: "seekable" });
    expect(manifestFieldsOf("extended")).toEqual({ dietVersion: 2 });
  });

  it("reads the reference runtime's manifest (no frame index) as compatible, ours without framing as seekable", () => {
    expect(kindOfManifest({ dietVersion: 1 })).toBe("compatible");
    expect(kindOfManifest({ dietVersion: 1, frames: [] })).toBe("seekable");
    expect(kindOfManifest({ dietVersion: 2, frames: [] })).toBe("extended");
  });

  it("seekable moves the compatible body sites; only extended moves more", () => {
    expect(sitesOf("seekable")).toBe(sitesOf("compatible"));
    expect(sitesOf("extended").length).toBeGreaterThan(sitesOf("compatible").length);
    expect(DIET_KINDS.filter(movesExtendedSites)).toEqual(["extended"]);
    expect(DIET_KINDS.every(isDietKind)).toBe(true);
    expect(isDietKind("one-frame")).toBe(false);
  });
});
