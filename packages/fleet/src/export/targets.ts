/**
 * What `export <exec|root>` exports: the directory itself when it is an execution (it holds a
 * `.hankweave/` directory), otherwise every execution found under it.
 */
import * as fsp from "node:fs/promises";
import { JournalError, layoutOf } from "@hankweave-journal/core";
import type { ExportTarget } from "./export.js";

/** The targets of `export <arg>` (arg absolute), the execution directories (for the output guard) and the root (null: one execution). */
export interface ExportTargets {
  targets: ExportTarget[];
  execs: string[];
  root: string | null;
}

/** Resolve `arg` (absolute) to what to export. Throws EXEC_NOT_FOUND when it does not exist. */
export async function exportTargets(arg: string): Promise<ExportTargets> {
  const st = await fsp.stat(layoutOf(arg).hankweave).catch(() => undefined);
  if (st?.isDirectory()) return { targets: [{ exec: arg, rel: "." }], execs: [arg], root: null };
  const top = await fsp.stat(arg).catch(() => undefined);
  if (!top) throw new JournalError("EXEC_NOT_FOUND", `${arg} does not exist`, { path: arg });
  throw new JournalError("EXEC_NOT_FOUND", `${arg} is not an execution directory (no .hankweave/)`, { path: arg }, {
    hint: "name an execution directory",
  });
}
