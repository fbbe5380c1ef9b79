/**
 * `listFleet`: the rows of `fleet ls` (discovery + one row per execution, filtered), streaming.
 */
import { discoverExecutions, type DiscoverOptions } from "./discover.js";
import { executionRow, type FleetRow } from "./execution-row.js";
import { isEmptyFilter, matchesFilter, type RowFilter } from "./filter.js";
import { mapConcurrent } from "./pool.js";

export interface ListOptions extends DiscoverOptions {
  filter?: RowFilter;
  /** Rows computed concurrently (I/O overlap; the fold itself is on this thread). Default 4. */
  jobs?: number;
}

/** Default concurrency of row computation: overlaps the stats and reads of small executions. */
export const LIST_JOBS = 4;

/**
 * Every execution under `root` as a `FleetRow` passing `opts.filter`, in completion order (sort
 * them yourself). Throws what `discoverExecutions` throws for the root; never for one execution.
 * @example for await (const row of listFleet("/runs", { filter: { status: ["failed"] } })) …
 */
export async function* listFleet(root: string, opts: ListOptions = {}): AsyncGenerator<FleetRow> {
  const filter = opts.filter ?? {};
  const rowOpts = opts.signal ? { signal: opts.signal } : {};
  const rows = mapConcurrent(discoverExecutions(root, opts), opts.jobs ?? LIST_JOBS, (e) => executionRow(e, rowOpts), opts.signal);
  for await (const row of rows) {
    if (isEmptyFilter(filter) || matchesFilter(row, filter)) yield row;
  }
}
