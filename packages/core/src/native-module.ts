/**
 * Native modules (better-sqlite3, zstd-napi, @mongodb-js/zstd) loaded so that a broken install
 * costs only the commands that need them. A native module that does not load — not built, or
 * built for another Node.js (better-sqlite3 is compiled against one Node ABI: upgrading Node
 * without `npm rebuild` breaks it) — used to crash every command at start-up with a stack trace;
 * now `cat`, `stats`, `rebuild` … still run, and the command that needs the module fails with
 * NATIVE_MODULE_UNAVAILABLE and a hint.
 */
import { JournalError } from "./errors.js";

/**
 * Load `id` with `req` now (at import: the cost stays outside any timed work, as before) and
 * return a getter that gives the module, or throws NATIVE_MODULE_UNAVAILABLE when it did not
 * load. `pkg` is the npm package to rebuild.
 *
 * @example const sqlite = nativeModule<typeof Database>(createRequire(import.meta.url), "better-sqlite3", "better-sqlite3"); new (sqlite())(path)
 */
export function nativeModule<T>(req: (id: string) => unknown, id: string, pkg: string): () => T {
  let value: T | undefined;
  let failure: unknown;
  try {
    value = req(id) as T;
  } catch (e) {
    failure = e;
  }
  return () => {
    if (failure === undefined) return value as T;
    const why = String((failure as Error)?.message ?? failure).split("\n")[0];
    throw new JournalError("NATIVE_MODULE_UNAVAILABLE", `the native module ${pkg} could not be loaded: ${why}`, { path: id }, {
      hint: `reinstall it for this Node.js (${process.version}): npm rebuild ${pkg} (or npm ci); it builds with python3, make and a C/C++ compiler`,
      cause: failure,
    });
  };
}
