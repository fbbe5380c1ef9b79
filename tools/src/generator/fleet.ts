/**
 * A generated fleet for the bench's fleet profile: `count` execution directories of one generator
 * profile under `root/runner-<k>/exec-<i>` (ten runner folders, the way CI runners leave them).
 * `distinct` of them are generated with their own seed; the rest are byte copies of those, in
 * turn (generating 1,000 executions took ~8 min on a loaded 2-core machine, copying them seconds;
 * the fleet commands do the same work on a copy as on a distinct journal of the same size).
 */
import { cpSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { generateExecution } from "./write-execution.js";
import type { ProfileName } from "./profile.js";

export interface FleetSpec {
  count: number;
  /** Byte target of each execution's journal. */
  bytesEach: number;
  seed: number;
  profile: ProfileName;
  /** How many are generated with their own seed (default min(count, 50)); the rest copy them. */
  distinct?: number;
  onProgress?: (done: number) => void;
}

/** Runner folders the executions are spread over. */
export const FLEET_RUNNER_FOLDERS = 10;

/** The directory of execution `i` under `root`. */
export function fleetExecPath(root: string, i: number): string {
  return join(root, `runner-${i % FLEET_RUNNER_FOLDERS}`, `exec-${String(i).padStart(5, "0")}`);
}

/**
 * Generate the fleet under `root` (created). Deterministic for the same spec. Refuses (through the
 * generator's GENERATE_TARGET_EXISTS) to overwrite an execution that exists.
 * @returns total journal bytes.
 */
export async function generateFleet(root: string, spec: FleetSpec): Promise<{ executions: number; seconds: number }> {
  const t0 = performance.now();
  const distinct = Math.max(1, Math.min(spec.count, spec.distinct ?? 50));
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < spec.count; i++) {
    const exec = fleetExecPath(root, i);
    if (i < distinct) {
      await generateExecution(exec, { seed: spec.seed * 100_003 + i, target: { bytes: spec.bytesEach }, profile: spec.profile });
    } else {
      if (existsSync(exec)) throw new Error(`${exec} exists`);
      cpSync(fleetExecPath(root, i % distinct), exec, { recursive: true });
    }
    spec.onProgress?.(i + 1);
  }
  return { executions: spec.count, seconds: (performance.now() - t0) / 1000 };
}
