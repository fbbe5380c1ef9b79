/**
 * better-sqlite3, loaded through `nativeModule`: it is compiled against one Node.js ABI, so a
 * Node upgrade without `npm rebuild` breaks it — then `index` and `query` fail with
 * NATIVE_MODULE_UNAVAILABLE while every other command still runs.
 */
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { nativeModule } from "@hankweave-journal/core";

/** The better-sqlite3 constructor (throws NATIVE_MODULE_UNAVAILABLE when it did not load). */
export const sqlite: () => typeof Database = nativeModule<typeof Database>(createRequire(import.meta.url), "better-sqlite3", "better-sqlite3");
