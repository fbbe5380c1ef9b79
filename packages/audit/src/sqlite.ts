/**
 * better-sqlite3, loaded through `nativeModule`: it is compiled against one Node.js ABI, so a
 * Node upgrade without `npm rebuild` breaks it — then `index` and `query` fail with
 * NATIVE_MODULE_UNAVAILABLE while every other command still runs.
 */
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { nativeModule } from "@hankweave-journal/core";

/**
 * Loaded on first use, not at import (as the zstd and DuckDB bindings): its load took ~6.6 ms of
 * every CLI start (`--version`, `restore`, `cat` …), and only index, query and the commands that
 * read an index use it.
 */
let getter: (() => typeof Database) | undefined;
/** The better-sqlite3 constructor (throws NATIVE_MODULE_UNAVAILABLE when it did not load). */
export const sqlite = (): typeof Database => (getter ??= nativeModule<typeof Database>(createRequire(import.meta.url), "better-sqlite3", "better-sqlite3"))();
