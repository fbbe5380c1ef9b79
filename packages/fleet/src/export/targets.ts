/**
 * What `export <exec|root> -o DIR` exports: the directory itself when it is an execution (it holds a
 * `.hankweave/` directory), otherwise every execution `discoverExecutions` finds under it; folders
 * it could not search and broken executions become failed targets with their code, executions
 * without a journal skipped ones.
 */
import * as fsp from "node:fs/promises";
import { layoutOf } from "@hankweave-journal/core";
import { discoverExecutions, type DiscoverOptions } from "../discover.js";
import type { ExportTarget } from "./export.js";

/** The targets of `export <arg>`, the execution directories (for the output guard) and the root (null: one execution). */
export interface ExportTargets {
  targets: ExportTarget[];
  execs: string[];
  root: string | null;
}

/**
 * Resolve `arg` (absolute) to what to export. Throws FLEET_ROOT_INVALID when it is not a
 * directory (discovery's error). Memory: one small entry per execution found.
 */
export async function exportTargets(arg: string, opts: DiscoverOptions = {}): Promise<ExportTargets> {
  const st = await fsp.stat(layoutOf(arg).hankweave).catch(() => undefined);
  if (st?.isDirectory()) return { targets: [{ exec: arg, rel: "." }], execs: [arg], root: null };
  const targets: ExportTarget[] = [];
  const execs: string[] = [];
  for await (const e of discoverExecutions(arg, opts)) {
    if (e.execution) execs.push(e.path);
    if (!e.execution || e.kind === "broken") {
      targets.push({ exec: e.path, rel: e.rel, broken: { code: e.code ?? "IO_ERROR", message: e.message ?? "could not be read" } });
    } else if (e.kind === "none") targets.push({ exec: e.path, rel: e.rel, empty: true });
    else targets.push({ exec: e.path, rel: e.rel });
  }
  return { targets, execs, root: await fsp.realpath(arg).catch(() => arg) };
}
