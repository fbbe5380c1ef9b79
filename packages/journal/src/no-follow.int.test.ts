// Writes never follow a symbolic link out of the execution (issue 14 class 2): the journal, a
// torn-tail quarantine target and the temps of the sidecar and the lock. Each case plants a link to
// a file OUTSIDE the execution and asserts the stable code and that the outside file is
// byte-identical afterwards.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyRepair, planRepair } from "./repair.js";
import { openJournalWriter } from "./writer.js";
import { writeSidecar } from "./sidecar.js";
import { copyFileNoFollow, errnoOf, ioError, writeFileDurable, writeFileNoSyncSync } from "./durable-file.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const LINE = '{"id":"1","timestamp":"2026-01-01T00:00:00.000Z","type":"info","data":1}\n';
const OUTSIDE_BYTES = Buffer.from(`${LINE}{"torn fragment of the outside file`);

/** An execution dir and, beside it (outside the execution), a victim file with known bytes. */
function setup(): { exec: string; victim: string } {
  const root = mkdtempSync(`${tmpdir()}/hwj-nofollow-`);
  dirs.push(root);
  const exec = path.join(root, "exec");
  mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  const victim = path.join(root, "outside.txt");
  writeFileSync(victim, OUTSIDE_BYTES);
  return { exec, victim };
}

describe("writes inside .hankweave/ never follow a symbolic link", () => {
  it("repair refuses a journal that is a link to a file outside the execution (SYMLINK_REFUSED), the file untouched", async () => {
    const { exec, victim } = setup();
    symlinkSync(victim, layoutOf(exec).journal);
    const plan = await planRepair(exec);
    expect(plan.tornTail).not.toBeNull();
    await expect(applyRepair(plan)).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(lstatSync(layoutOf(exec).journal).isSymbolicLink()).toBe(true);
  });

  it("the writer refuses to open a journal that is a link (SYMLINK_REFUSED), the file untouched", async () => {
    const { exec, victim } = setup();
    symlinkSync(victim, layoutOf(exec).journal);
    await expect(openJournalWriter(exec, { durability: "none" })).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
  });

  it("a torn-tail quarantine name that is a link is skipped by the plan (next name), the link's target untouched", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.journal, `${LINE}{"torn`);
    symlinkSync(victim, l.tornFragment(LINE.length));
    const plan = await planRepair(exec);
    expect(plan.tornTail?.quarantinePath).toBe(l.tornFragment(LINE.length, 1));
    await applyRepair(plan);
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(readFileSync(l.tornFragment(LINE.length, 1), "utf8")).toBe('{"torn');
    expect(readFileSync(l.journal, "utf8")).toBe(LINE);
  });

  it("a link planted at the quarantine target after the plan is refused (SYMLINK_REFUSED), the journal keeps its fragment", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    const journal = Buffer.from(`${LINE}{"torn`);
    writeFileSync(l.journal, journal);
    const plan = await planRepair(exec);
    symlinkSync(victim, plan.tornTail?.quarantinePath as string);
    await expect(applyRepair(plan)).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(readFileSync(l.journal).equals(journal)).toBe(true);
  });

  it("a link planted at the sidecar temp is unlinked, never written through", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.journal, LINE);
    symlinkSync(victim, l.sidecarTmp);
    await writeSidecar(exec, { schemaVersion: 1, eventSchemaVersion: 2, totalEvents: 1, byteLength: LINE.length, lastEventId: "1" });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(existsSync(l.sidecarTmp)).toBe(false);
    expect(JSON.parse(readFileSync(l.sidecar, "utf8")).totalEvents).toBe(1);
  });

  it("a final path that is a link is replaced by the rename, its target untouched", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    symlinkSync(victim, l.sidecar);
    await writeFileDurable(l.sidecar, "{}", { tmp: l.sidecarTmp });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(lstatSync(l.sidecar).isFile()).toBe(true);
  });

  it("copyFileNoFollow refuses a link at the destination and reads no link at the source", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.state, "{}");
    symlinkSync(victim, l.stateBak);
    await expect(copyFileNoFollow(l.state, l.stateBak)).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    rmSync(l.stateBak);
    rmSync(l.state);
    symlinkSync(victim, l.state);
    await expect(copyFileNoFollow(l.state, l.stateBak)).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(existsSync(l.stateBak)).toBe(false);
  });

  it("a directory at a temp name is NOT_A_REGULAR_FILE and stays; the final file is untouched", async () => {
    const { exec } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.sidecar, "old");
    mkdirSync(l.sidecarTmp);
    await expect(writeFileDurable(l.sidecar, "new", { tmp: l.sidecarTmp })).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    expect(readFileSync(l.sidecar, "utf8")).toBe("old");
    expect(lstatSync(l.sidecarTmp).isDirectory()).toBe(true);
  });

  it("a directory at the final path is NOT_A_REGULAR_FILE and no temp is left", async () => {
    const { exec } = setup();
    const l = layoutOf(exec);
    mkdirSync(l.sidecar);
    await expect(writeFileDurable(l.sidecar, "new", { tmp: l.sidecarTmp })).rejects.toMatchObject({ code: "NOT_A_REGULAR_FILE" });
    expect(existsSync(l.sidecarTmp)).toBe(false);
  });
});

describe("writeFileNoSyncSync (the diet's CAS blobs, synced later in one batch) keeps writeFileDurable's rules", () => {
  it("unlinks a link planted at the temp, replaces a link at the final path, never writes through either", () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    symlinkSync(victim, l.sidecarTmp);
    symlinkSync(victim, l.sidecar);
    writeFileNoSyncSync(l.sidecar, Buffer.from("new"), { tmp: l.sidecarTmp });
    expect(readFileSync(victim).equals(OUTSIDE_BYTES)).toBe(true);
    expect(lstatSync(l.sidecar).isFile()).toBe(true);
    expect(readFileSync(l.sidecar, "utf8")).toBe("new");
    expect(existsSync(l.sidecarTmp)).toBe(false);
  });

  it("a directory at the temp stays (NOT_A_REGULAR_FILE); a directory at the final path leaves no temp", () => {
    const { exec } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.sidecar, "old");
    mkdirSync(l.sidecarTmp);
    expect(() => writeFileNoSyncSync(l.sidecar, Buffer.from("new"), { tmp: l.sidecarTmp })).toThrow(expect.objectContaining({ code: "NOT_A_REGULAR_FILE" }));
    expect(readFileSync(l.sidecar, "utf8")).toBe("old");
    expect(lstatSync(l.sidecarTmp).isDirectory()).toBe(true);
    rmSync(l.sidecarTmp, { recursive: true });
    rmSync(l.sidecar);
    mkdirSync(l.sidecar);
    expect(() => writeFileNoSyncSync(l.sidecar, Buffer.from("new"), { tmp: l.sidecarTmp })).toThrow(expect.objectContaining({ code: "NOT_A_REGULAR_FILE" }));
    expect(existsSync(l.sidecarTmp)).toBe(false);
  });
});

describe("ioError codes OS errors", () => {
  it.each([
    ["ENOSPC", "NO_SPACE"], ["EDQUOT", "NO_SPACE"], ["EROFS", "READ_ONLY"], ["ELOOP", "SYMLINK_REFUSED"],
    ["EISDIR", "NOT_A_REGULAR_FILE"], ["EACCES", "PERMISSION_DENIED"], ["EIO", "IO_ERROR"],
  ])("%s → %s, with the errno and path in details", (errno, code) => {
    const e = Object.assign(new Error(`${errno}: boom`), { code: errno });
    const j = ioError(e, "/x/y");
    expect(j.code).toBe(code);
    expect(j.details).toMatchObject({ path: "/x/y", errno });
    expect(errnoOf(e)).toBe(errno);
  });

  it("passes a JournalError through and codes a worker's plain {code} object", () => {
    const inner = ioError({ code: "ENOSPC", message: "no space" }, "/a");
    expect(inner.code).toBe("NO_SPACE");
    expect(ioError(inner, "/b")).toBe(inner);
  });
});
