import { describe, expect, it } from "vitest";
import { parseSize } from "../generator/size.js";
import { parseBenchArgs } from "../bench.js";
import { FLEET_DEFAULTS, parseFleetFlags } from "./fleet.js";

describe("the fleet profile's flags", () => {
  it("--profile fleet selects the two fleets (defaults 1,000 small and 20 × 50 MB) and no generator profile", () => {
    const { opts } = parseBenchArgs(["--profile", "fleet"]);
    expect(opts.profiles).toEqual([]);
    expect(opts.fleet).toEqual(FLEET_DEFAULTS);
    expect(FLEET_DEFAULTS).toMatchObject({ small: 1000, bigCount: 20, bigBytes: 50_000_000 });
    expect(parseBenchArgs(["--profile", "real,fleet", "--fleet-small", "100", "--fleet-big", "2x5MB"]).opts).toMatchObject({
      profiles: ["real"], fleet: { small: 100, bigCount: 2, bigBytes: 5_000_000 },
    });
    expect(parseBenchArgs(["--profile", "all"]).opts.fleet).toBeNull();
  });

  it("refuses bad fleet sizes and fleet flags without the fleet profile", () => {
    expect(() => parseFleetFlags("0", undefined, parseSize)).toThrow(/--fleet-small/);
    expect(() => parseFleetFlags(undefined, "20", parseSize)).toThrow(/--fleet-big/);
    expect(() => parseBenchArgs(["--fleet-small", "10"])).toThrow(/need --profile fleet/);
  });
});
