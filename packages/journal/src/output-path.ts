/**
 * The one guard for a user-named output path (`report -o`, `export -o`, any command that writes a
 * file the user names): it never lets a command overwrite a journal, a state file or any other file
 * of an execution, and never replaces a device, FIFO or socket with a regular file.
 *
 * Guarantees: `-` means stdout; otherwise the path is resolved against `cwd`, symlinks are resolved
 * (the existing target when there is one, else the real parent directory), and the result is
 * refused with OUTPUT_IN_EXECUTION when any of its components is a `.hankweave` directory (of any
 * execution, not only the one being read), with NOT_A_REGULAR_FILE when it exists and is not a
 * regular file (a directory, /dev/null, a FIFO, a socket), and with IO_ERROR when its directory
 * does not exist. It checks, it does not write: callers write `path` (the resolved target, so a
 * symlink to an allowed file is written through, never replaced) with a temp file and a rename.
 * A file changed between the check and the write (a race) is not covered.
 *
 * @example
 *   const out = await checkOutputPath(args.out, io.cwd);
 *   if (out.kind === "stdout") await io.stdout(html); else await writeReportFile(out.path, html);
 */
import * as fsp from "node:fs/promises";
import * as path from "node:path";
import { HANKWEAVE_DIR, JournalError } from "@hankweave-journal/core";
import { ioError } from "./durable-file.js";

/** Where output goes: stdout (`-`) or a checked, resolved file path. */
export type OutputTarget = { kind: "stdout" } | { kind: "file"; path: string; exists: boolean };

/** The spelling that means stdout. */
export const STDOUT_PATH = "-";

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException)?.code;
}

/** Resolve `p` through symlinks: the existing file's real path, or the real parent + the name. */
async function resolveTarget(p: string): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await fsp.realpath(p), exists: true };
  } catch (e) {
    // ENOENT: the file (or a dangling symlink's target) does not exist yet.
    if (code(e) !== "ENOENT") throw ioError(e, p);
  }
  let link: string | undefined;
  try {
    link = await fsp.readlink(p);
  } catch {
    link = undefined;
  }
  // A dangling symlink: writing through it creates its target, so judge the target.
  if (link !== undefined) return resolveTarget(path.resolve(path.dirname(p), link));
  const dir = path.dirname(p);
  let realDir: string;
  try {
    realDir = await fsp.realpath(dir);
  } catch (e) {
    throw new JournalError("IO_ERROR", `cannot write ${p}: its directory ${dir} does not exist or cannot be read`, { path: p }, { cause: e });
  }
  return { real: path.join(realDir, path.basename(p)), exists: false };
}

/** True when a component of the absolute path `p` is `.hankweave`. */
export function isInsideHankweave(p: string): boolean {
  return path.resolve(p).split(path.sep).includes(HANKWEAVE_DIR);
}

/**
 * Check a user-named output path (see the module doc). Throws OUTPUT_IN_EXECUTION,
 * NOT_A_REGULAR_FILE or IO_ERROR; never writes.
 */
export async function checkOutputPath(userPath: string, cwd: string): Promise<OutputTarget> {
  if (userPath === STDOUT_PATH) return { kind: "stdout" };
  if (userPath.length === 0) throw new JournalError("USAGE", "an output path is empty");
  const abs = path.resolve(cwd, userPath);
  const hint = "write the output outside every execution's .hankweave/ directory (or use -o - for stdout)";
  // Judge the spelled path too: a .hankweave component refuses even when it resolves elsewhere.
  if (isInsideHankweave(abs)) {
    throw new JournalError("OUTPUT_IN_EXECUTION", `refusing to write ${abs}: it is inside an execution's ${HANKWEAVE_DIR}/ directory`, { path: abs }, { hint });
  }
  const { real, exists } = await resolveTarget(abs);
  if (isInsideHankweave(real)) {
    throw new JournalError(
      "OUTPUT_IN_EXECUTION",
      `refusing to write ${abs}: it resolves to ${real}, inside an execution's ${HANKWEAVE_DIR}/ directory`,
      { path: abs, actual: real },
      { hint },
    );
  }
  if (exists) {
    let st;
    try {
      st = await fsp.stat(real);
    } catch (e) {
      throw ioError(e, real);
    }
    if (!st.isFile()) {
      const what = st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO" : st.isCharacterDevice() ? "a character device" : st.isBlockDevice() ? "a block device" : st.isSocket() ? "a socket" : "not a regular file";
      throw new JournalError("NOT_A_REGULAR_FILE", `refusing to write ${abs}: it is ${what}; an output path must be a regular file or absent`, { path: abs, actual: what }, { hint: "name a new file, or use -o - for stdout" });
    }
  }
  return { kind: "file", path: real, exists };
}
