// The realistic execution generator: seeded simulation planner + writer through the state engine.
export { createRng } from "./prng.js";
export type { Rng } from "./prng.js";
export { buildCorpus, BODY_KINDS } from "./corpus.js";
export type { Corpus, BodyKind } from "./corpus.js";
export { planExecution, plannedCodonCount } from "./planner.js";
export type { SimStep, Measure, SizeTarget, PlanOptions } from "./planner.js";
export { generateExecution } from "./write-execution.js";
export type { GenerateOptions, GenerateReport } from "./write-execution.js";
export { parseSize, formatBytes } from "./size.js";
export { BODY_HEAVY, REAL, PROFILE_NAMES, profileByName } from "./profile.js";
export type { GeneratorProfile, ProfileName } from "./profile.js";
export { generateFleet, fleetExecPath, FLEET_RUNNER_FOLDERS } from "./fleet.js";
export type { FleetSpec } from "./fleet.js";
