/**
 * `codonCost` of every codon record of the fold's state, kept up to date edit by edit, so the cost
 * sums after a transition are tight loops over numbers instead of `codonCost` over every record
 * of every run (at 1 GB a run holds ~300 records and three such sums ran per CostsIncremented).
 *
 * Guarantees: `runCost(ri)` and `totalCost()` are bit-identical to fold-helpers' `runCost` and
 * core's `totalCost` of the state last given to `update` — the same values added in the same
 * order from 0 (tested against both).
 */
import { codonCost, type HankweaveState } from "@hankweave-journal/core";

/** The codon record an edit replaced or appended (`ci` = the old length for an append). */
export interface CodonEdit {
  ri: number;
  ci: number;
}

/** Per-run `codonCost` values of one state (see the module comment). */
export class CodonCosts {
  private costs: number[][] | null = null;

  /** Bring the costs to `state`: `edit` is the only record that changed, or null when anything may have. */
  update(state: HankweaveState, edit: CodonEdit | null): void {
    if (edit === null || this.costs === null) {
      this.costs = state.runs.map((r) => r.codons.map(codonCost));
      return;
    }
    this.costs[edit.ri][edit.ci] = codonCost(state.runs[edit.ri].codons[edit.ci]);
  }

  /** Forget everything (the next `update` recomputes). */
  reset(): void {
    this.costs = null;
  }

  /** The cost of run `ri`: `runCost(state.runs[ri])`. */
  runCost(ri: number): number {
    const row = (this.costs as number[][])[ri];
    let total = 0;
    for (let i = 0; i < row.length; i++) total += row[i];
    return total;
  }

  /** `totalCost(state)`: one accumulator over runs (array order) then codons. */
  totalCost(): number {
    let total = 0;
    for (const row of this.costs as number[][]) for (let i = 0; i < row.length; i++) total += row[i];
    return total;
  }
}
