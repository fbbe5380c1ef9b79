import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { isJournalError } from "@hankweave-journal/core";
import { checkOutputPath } from "./output-path.js";

async function codeOf(p: string, cwd = "/"): Promise<string> {
  try {
    await checkOutputPath(p, cwd);
    return "ok";
  } catch (e) {
    if (!isJournalError(e)) throw e;
    return e.code;
  }
}

describe("checkOutputPath refuses every output path that could destroy a journal, state or device", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "outpath-"));
  const exec = path.join(dir, "exec");
  mkdirSync(path.join(exec, ".hankweave", "events"), { recursive: true });
  const journal = path.join(exec, ".hankweave", "events", "events.jsonl");
  writeFileSync(journal, "{}\n");
  writeFileSync(path.join(exec, ".hankweave", "state.json"), "{}");
  writeFileSync(path.join(dir, "plain.html"), "x");
  symlinkSync(journal, path.join(dir, "link-to-journal"));
  symlinkSync(path.join(exec, ".hankweave", "events", "new.html"), path.join(dir, "dangling-into-hankweave"));
  symlinkSync(path.join(dir, "plain.html"), path.join(dir, "link-to-plain"));
  symlinkSync(path.join(exec, ".hankweave"), path.join(dir, "hw"));
  const fifo = path.join(dir, "fifo");
  execFileSync("mkfifo", [fifo]);

  it("refuses a journal, state.json, a dieted journal or a new file inside any .hankweave/ with OUTPUT_IN_EXECUTION", async () => {
    expect(await codeOf(journal)).toBe("OUTPUT_IN_EXECUTION");
    expect(await codeOf(path.join(exec, ".hankweave", "state.json"))).toBe("OUTPUT_IN_EXECUTION");
    expect(await codeOf(path.join(exec, ".hankweave", "events", "events.jsonl.zst"))).toBe("OUTPUT_IN_EXECUTION");
    expect(await codeOf(".hankweave/events/events.jsonl", exec)).toBe("OUTPUT_IN_EXECUTION");
  });

  it("resolves symlinks first: a link to the journal, a dangling link into .hankweave, a linked directory", async () => {
    expect(await codeOf(path.join(dir, "link-to-journal"))).toBe("OUTPUT_IN_EXECUTION");
    expect(await codeOf(path.join(dir, "dangling-into-hankweave"))).toBe("OUTPUT_IN_EXECUTION");
    expect(await codeOf(path.join(dir, "hw", "state.json"))).toBe("OUTPUT_IN_EXECUTION");
    expect(await checkOutputPath(path.join(dir, "link-to-plain"), "/")).toEqual({ kind: "file", path: path.join(dir, "plain.html"), exists: true });
  });

  it("refuses /dev/null, a FIFO and a directory with NOT_A_REGULAR_FILE; a missing directory with IO_ERROR", async () => {
    expect(await codeOf("/dev/null")).toBe("NOT_A_REGULAR_FILE");
    expect(await codeOf(fifo)).toBe("NOT_A_REGULAR_FILE");
    expect(await codeOf(dir)).toBe("NOT_A_REGULAR_FILE");
    expect(await codeOf(path.join(dir, "nope", "r.html"))).toBe("IO_ERROR");
  });

  it("accepts a new or regular file outside every .hankweave/, and - as stdout", async () => {
    expect(await checkOutputPath("new.html", dir)).toEqual({ kind: "file", path: path.join(dir, "new.html"), exists: false });
    expect(await checkOutputPath(path.join(exec, "report.html"), "/")).toMatchObject({ kind: "file", exists: false });
    expect(await checkOutputPath("-", dir)).toEqual({ kind: "stdout" });
  });
});
