/**
 * The in-place application of a `planTransition` edit, for folds that own their state (a rebuild:
 * nobody sees the intermediate states). Same rules as `evolveReport` (the plan is the same); only
 * the containers differ: the state object, the runs array, the run and its codons array are copied
 * once, the first time an edit touches them while not private, then mutated. Replaced records are
 * always new objects (never mutated), so records shared with earlier states stay true.
 */
import type { HankweaveState, Run } from "./state-types.js";
import type { TransitionPlan } from "./reducer.js";
import { codonIndex, ownIndex } from "./reducer-index.js";

/** A plan that edits one codon record. */
export type CodonEditPlan = Extract<TransitionPlan, { edit: "replace" | "append" }>;

/**
 * Apply `plan` to `state`, mutating only objects in `owned` (the caller's private copies) and
 * copying (then adding to `owned`) any container on the path that is not. Returns the state to use
 * from now on (`state` itself when it was owned). Start a new `owned` set whenever the state may
 * have been seen by someone else: the next edit then copies what it touches.
 * @example s = applyEditInPlace(s, planTransition(s, t, at) as CodonEditPlan, owned)
 */
export function applyEditInPlace(state: HankweaveState, plan: CodonEditPlan, owned: WeakSet<object>): HankweaveState {
  let s = state;
  if (!owned.has(s)) {
    s = { ...s };
    owned.add(s);
  }
  let runs = s.runs;
  if (!owned.has(runs)) {
    runs = runs.slice();
    owned.add(runs);
    s.runs = runs;
  }
  let run: Run = runs[plan.ri];
  if (!owned.has(run)) {
    run = { ...run };
    owned.add(run);
    runs[plan.ri] = run;
  }
  let codons = run.codons;
  if (!owned.has(codons)) {
    const copy = codons.slice();
    ownIndex(codons, copy);
    owned.add(copy);
    run.codons = copy;
    codons = copy;
  }
  if (plan.edit === "replace") {
    codons[plan.ci] = plan.record;
  } else {
    const index = codonIndex(codons);
    const list = index.get(plan.record.codonId);
    if (list === undefined) index.set(plan.record.codonId, [codons.length]);
    else list.push(codons.length);
    codons.push(plan.record);
  }
  return s;
}
