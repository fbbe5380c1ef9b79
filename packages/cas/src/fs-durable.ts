/**
 * Durable file primitives of the CAS and the diet: fsync of files and directories, temp + fsync +
 * rename, and typed wrappers of OS errors. Every write to a final path goes through here.
 */
import * as fsp from "node:fs/promises";
import { JournalError } from "@hankweave-journal/core";

/** Wrap an OS error as IO_ERROR (or NOT_A_REGULAR_FILE / ENOENT passthrough to the caller's code). */
export function ioError(e: unknown, path: string): JournalError {
  const err = e as NodeJS.ErrnoException;
  return new JournalError("IO_ERROR", `${err?.code ?? "error"} on ${path}: ${err?.message ?? String(e)}`, { path }, { cause: e });
}

/** fsync a directory so a rename or unlink inside it is durable. Tolerates platforms that refuse (EINVAL/EISDIR). */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, "r");
    await fh.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM") throw ioError(e, dir);
  } finally {
    await fh?.close();
  }
}

/** Write `data` to `tmp`, fsync, rename to `final`, fsync the directory; the temp is removed on failure. */
export async function writeFileDurable(final: string, tmp: string, data: Uint8Array, dir: string): Promise<void> {
  try {
    const fh = await fsp.open(tmp, "w", 0o644);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, final);
  } catch (e) {
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw e instanceof JournalError ? e : ioError(e, final);
  }
  await fsyncDir(dir);
}

/** `lstat` or undefined when the path does not exist. */
export async function lstatOrUndefined(path: string): Promise<import("node:fs").Stats | undefined> {
  try {
    return await fsp.lstat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw ioError(e, path);
  }
}

/** Throw NOT_A_REGULAR_FILE unless `path` is a regular file (symlinks, FIFOs, directories refused). */
export async function assertRegularFile(path: string): Promise<import("node:fs").Stats | undefined> {
  const st = await lstatOrUndefined(path);
  if (st !== undefined && !st.isFile()) {
    throw new JournalError("NOT_A_REGULAR_FILE", `${path} is not a regular file`, { path });
  }
  return st;
}
