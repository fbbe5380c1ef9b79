/**
 * `mapConcurrent`: run an async function over an async iterable with at most `jobs` calls in
 * flight, pulling the next item only when a slot frees (the source is never read ahead, so a
 * streaming discovery stays streaming), yielding results as they complete (not in input order).
 */

/**
 * Map `fn` over `source` with at most `jobs` concurrent calls; results in completion order.
 * Stops pulling new items once `signal` is aborted and drains what is in flight. A rejection of
 * `fn` rejects the iteration (callers catch per item inside `fn`).
 * @example for await (const r of mapConcurrent(entries, 4, work)) print(r);
 */
export async function* mapConcurrent<T, R>(
  source: AsyncIterable<T>, jobs: number, fn: (item: T) => Promise<R>, signal?: AbortSignal,
): AsyncGenerator<R> {
  if (!Number.isInteger(jobs) || jobs < 1) throw new RangeError(`jobs must be a positive integer, got ${jobs}`);
  const it = source[Symbol.asyncIterator]();
  const inFlight = new Map<number, Promise<{ id: number; value: R }>>();
  let nextId = 0;
  let done = false;
  try {
    for (;;) {
      while (!done && inFlight.size < jobs && !signal?.aborted) {
        const n = await it.next();
        if (n.done) {
          done = true;
          break;
        }
        const id = nextId++;
        inFlight.set(id, fn(n.value).then((value) => ({ id, value })));
      }
      if (inFlight.size === 0) return;
      const { id, value } = await Promise.race(inFlight.values());
      inFlight.delete(id);
      yield value;
    }
  } finally {
    // Let in-flight work finish (each item owns its lock and its temps) before giving up the source.
    await Promise.allSettled(inFlight.values());
    if (!done) await it.return?.();
  }
}
