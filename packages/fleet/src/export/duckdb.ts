/**
 * @duckdb/node-api (embedded DuckDB, its binary inside the registry package), loaded through core's
 * `nativeModule` on first use, not at import: every other command starts without paying for it,
 * and when it cannot load only the Parquet export and `fleet query` fail, with
 * NATIVE_MODULE_UNAVAILABLE (NDJSON export needs no DuckDB).
 */
import { createRequire } from "node:module";
import type * as DuckDB from "@duckdb/node-api";
import { nativeModule } from "@hankweave-journal/core";

export type DuckDBModule = typeof DuckDB;

/** How the module is required (tests give one that fails). */
export type Requirer = (id: string) => unknown;

let getter: (() => DuckDBModule) | undefined;
let requirer: Requirer = createRequire(import.meta.url);

/** The DuckDB module (throws NATIVE_MODULE_UNAVAILABLE when it does not load). */
export function duckdb(): DuckDBModule {
  getter ??= nativeModule<DuckDBModule>(requirer, "@duckdb/node-api", "@duckdb/node-api");
  return getter();
}

/** Tests only: load the module with `req` from now on (undefined: the real require), forgetting an earlier load. */
export function setDuckdbRequirer(req: Requirer | undefined): void {
  requirer = req ?? createRequire(import.meta.url);
  getter = undefined;
}

/** `'text'` as a SQL string literal. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
