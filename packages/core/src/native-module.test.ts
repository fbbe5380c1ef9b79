import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { isJournalError } from "./errors.js";
import { nativeModule } from "./native-module.js";

const req = createRequire(import.meta.url);

describe("nativeModule", () => {
  it("gives the module when it loads (loaded once, at the call)", () => {
    let loads = 0;
    const get = nativeModule<{ x: number }>((id) => {
      loads++;
      return { x: id.length };
    }, "abc", "abc");
    expect(loads).toBe(1);
    expect(get().x).toBe(3);
    expect(get()).toBe(get());
    expect(loads).toBe(1);
  });

  it("defers a failed load to the first use, as NATIVE_MODULE_UNAVAILABLE with the package to rebuild", () => {
    const get = nativeModule(req, "hankweave-no-such-native-module", "hankweave-no-such-native-module");
    let thrown: unknown;
    try {
      get();
    } catch (e) {
      thrown = e;
    }
    expect(isJournalError(thrown, "NATIVE_MODULE_UNAVAILABLE")).toBe(true);
    const e = thrown as { message: string; hint?: string; details: { path?: string } };
    expect(e.message).toContain("hankweave-no-such-native-module could not be loaded: Cannot find module");
    expect(e.message).not.toContain("\n");
    expect(e.hint).toContain("npm rebuild hankweave-no-such-native-module");
    expect(e.hint).toContain(process.version);
    expect(e.details.path).toBe("hankweave-no-such-native-module");
    // Every use says so, not only the first.
    expect(() => get()).toThrow(/could not be loaded/);
  });
});
