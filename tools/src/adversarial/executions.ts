/**
 * Base executions of the adversarial corpus, all deterministic and small: a finished run (the diet
 * fixture `ok-finished-run`, 27 lines), the same dieted (made once per process with applyDiet and
 * copied per case), and a helper to write raw journal bytes.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";

const REPO = path.resolve(import.meta.dirname, "../../..");
export const FINISHED_FIXTURE = path.join(REPO, "fixtures", "diet", "ok-finished-run");

/** Copy the finished-run fixture to `root/exec` (its .hankweave only); returns the exec path. */
export function finishedExec(root: string, name = "exec"): string {
  const exec = path.join(root, name);
  fs.mkdirSync(exec, { recursive: true });
  fs.cpSync(path.join(FINISHED_FIXTURE, ".hankweave"), path.join(exec, ".hankweave"), { recursive: true });
  return exec;
}

/** The journal bytes of the finished fixture. */
export function finishedJournal(): Buffer {
  return fs.readFileSync(layoutOf(FINISHED_FIXTURE).journal);
}

let dietedTemplate: Promise<string> | undefined;

/**
 * A dieted copy of the finished run at `root/exec` (the diet is made once per process, in its own
 * temp directory, removed at exit; `_template` is kept for callers' symmetry).
 */
export async function dietedExec(root: string, _template: string, name = "exec"): Promise<string> {
  dietedTemplate ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hw-adversarial-diet-"));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    const t = finishedExec(dir, "dieted-template");
    await applyDiet(t, { kind: "compatible" });
    return t;
  })();
  const t = await dietedTemplate;
  const exec = path.join(root, name);
  fs.mkdirSync(exec, { recursive: true });
  fs.cpSync(path.join(t, ".hankweave"), path.join(exec, ".hankweave"), { recursive: true });
  return exec;
}

/** An execution at `root/exec` whose journal is exactly `bytes`. */
export function execWithJournal(root: string, bytes: Buffer | string, name = "exec"): string {
  const exec = path.join(root, name);
  fs.mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  fs.writeFileSync(layoutOf(exec).journal, bytes);
  return exec;
}

/** The finished journal's lines (without their newlines). */
export function finishedLines(): Buffer[] {
  const b = finishedJournal();
  const out: Buffer[] = [];
  let at = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, at)) {
    out.push(b.subarray(at, i));
    at = i + 1;
  }
  return out;
}

/** Join lines with `\n` after each. */
export function joinLines(lines: (Buffer | string)[]): Buffer {
  return Buffer.concat(lines.flatMap((l) => [Buffer.isBuffer(l) ? l : Buffer.from(l, "utf8"), Buffer.from("\n")]));
}
