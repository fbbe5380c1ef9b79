/**
 * One way to start a `worker_threads` Worker from a real module file next to its caller, the same
 * from the TypeScript sources (vitest, `npm start` through tsx) and from the built package
 * (`dist/*.js`, no tsx at run time).
 *
 * The caller names the built file: `startWorker(new URL("./index-worker.js", import.meta.url))`.
 * When that `.js` exists (the built package) it is the worker's entry, started as is. When only
 * the `.ts` beside it exists (running from the sources) the worker starts from
 * `worker-boot.mjs`, a plain JavaScript file that registers tsx's loader inside the worker and then
 * imports the `.ts` entry: Node 20 does not carry the parent's loader hooks into a worker, and a
 * worker's `execArgv: ["--import", "tsx"]` is applied after its entry is resolved, so neither works
 * alone (measured on Node 20.20). `workerData`, `argv` and the other options reach the worker
 * unchanged in both cases.
 *
 * Guarantees: never runs code from a string; the entry is type-checked like any module. Does not
 * guarantee that tsx is installed: running from the sources needs it (a dev dependency), the built
 * package does not.
 *
 * @example const worker = startWorker(new URL("./zstd.worker.js", import.meta.url), { workerData: { lib } })
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker, type WorkerOptions } from "node:worker_threads";

/** How `startWorker` would start `entry`: the module it loads first and the TypeScript module, if any. */
export interface WorkerEntry {
  /** The file the worker thread starts from (the `.js` itself, or the tsx boot script). */
  start: URL;
  /** The TypeScript module the boot script imports, when starting from the sources; else undefined. */
  source: URL | undefined;
}

const BOOT_URL = new URL("./worker-boot.mjs", import.meta.url);

/**
 * Decide how to start the worker module `entry` (a `file:` URL ending in `.js`): the `.js` when it
 * exists, else the `.ts` beside it through the tsx boot script. Throws a TypeError when neither
 * exists (a packaging defect, not bad input).
 */
export function workerEntryOf(entry: URL): WorkerEntry {
  if (entry.protocol !== "file:" || !entry.pathname.endsWith(".js")) {
    throw new TypeError(`a worker entry must be a file: URL of a .js module, got ${entry.href}`);
  }
  if (existsSync(fileURLToPath(entry))) return { start: entry, source: undefined };
  const ts = new URL(entry.href.replace(/\.js$/, ".ts"));
  if (existsSync(fileURLToPath(ts))) return { start: BOOT_URL, source: ts };
  throw new TypeError(`worker module not found: neither ${fileURLToPath(entry)} nor its .ts source exists`);
}

/**
 * Start a Worker running the module `entry` (see the module comment). `options` are passed to
 * `new Worker` as given, except `eval`, which is refused.
 */
export function startWorker(entry: URL, options: WorkerOptions = {}): Worker {
  if ((options as { eval?: unknown }).eval) throw new TypeError("startWorker runs module files, never code from strings");
  const { start, source } = workerEntryOf(entry);
  if (source === undefined) return new Worker(start, options);
  // The boot script takes the source's URL as its first argument and removes it from
  // process.argv before the entry runs, so the entry sees the argv it would see when built.
  return new Worker(start, { ...options, argv: [source.href, ...(options.argv ?? [])] });
}
