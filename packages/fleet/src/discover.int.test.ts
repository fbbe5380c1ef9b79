import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet } from "@hankweave-journal/diet";
import { discoverExecutions, type FleetEntry } from "./discover.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const FIX = path.join(REPO, "fixtures");
const CONF = path.resolve(REPO, "../shared/conformance");
const tmp = mkdtempSync(path.join(tmpdir(), "fleet-discover-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }), 60_000);

async function all(root: string, opts = {}): Promise<FleetEntry[]> {
  const out: FleetEntry[] = [];
  for await (const e of discoverExecutions(root, opts)) out.push(e);
  return out.sort((a, b) => a.rel.localeCompare(b.rel));
}

function copyExec(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  cpSync(path.join(from, ".hankweave"), path.join(to, ".hankweave"), { recursive: true });
}

describe("discoverExecutions", () => {
  it("finds executions at any depth, the root included, with their journal kind, and never enters .hankweave", async () => {
    const root = path.join(tmp, "mixed");
    copyExec(path.join(FIX, "diet/ok-finished-run"), root);
    copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(root, "a/b/c/plain"));
    for (const [name, opts] of [["dieted", {}], ["seekable", { kind: "seekable" as const }], ["extended", { kind: "extended" as const }]] as const) {
      copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(root, "a", name));
      await applyDiet(path.join(root, "a", name), opts);
    }
    mkdirSync(path.join(root, "a/none/.hankweave"), { recursive: true });
    mkdirSync(path.join(root, "a/half/.hankweave/events"), { recursive: true });
    writeFileSync(layoutOf(path.join(root, "a/half")).dietedJournal, "x");
    mkdirSync(path.join(root, "a/badmanifest/.hankweave/events"), { recursive: true });
    writeFileSync(layoutOf(path.join(root, "a/badmanifest")).dietedJournal, "x");
    writeFileSync(layoutOf(path.join(root, "a/badmanifest")).manifest, "{not json");
    // A folder inside .hankweave that looks like an execution: never reported.
    mkdirSync(path.join(root, ".hankweave/inner/.hankweave"), { recursive: true });
    mkdirSync(path.join(root, "empty/deeper"), { recursive: true });
    const got = await all(root);
    expect(got.map((e) => [e.rel, e.kind, e.code])).toEqual([
      [".", "plain", null],
      ["a/b/c/plain", "plain", null],
      ["a/badmanifest", "broken", "MANIFEST_INVALID"],
      ["a/dieted", "compatible", null],
      ["a/extended", "extended", null],
      ["a/half", "broken", "HALF_PAIR"],
      ["a/none", "none", null],
      ["a/seekable", "seekable", null],
    ]);
    expect(got[0]!.path).toBe(root);
    expect(got[0]!.journalBytes).toBeGreaterThan(20_000);
  });

  it("refuses a root that is a file or does not exist with FLEET_ROOT_INVALID", async () => {
    const file = path.join(tmp, "a-file");
    writeFileSync(file, "x");
    await expect(all(file)).rejects.toMatchObject({ code: "FLEET_ROOT_INVALID" });
    await expect(all(path.join(tmp, "missing"))).rejects.toMatchObject({ code: "FLEET_ROOT_INVALID" });
  });

  it("never follows a symbolic link: a loop back to the root and a link out of the root are not entered", async () => {
    const root = path.join(tmp, "loop");
    copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(root, "x"));
    symlinkSync(root, path.join(root, "x/back"));
    const outside = path.join(tmp, "outside");
    copyExec(path.join(FIX, "diet/ok-finished-run"), outside);
    symlinkSync(outside, path.join(root, "out"));
    const got = await all(root);
    expect(got.map((e) => e.rel)).toEqual(["x"]);
  });

  it("reports a .hankweave that is a symbolic link as broken (SYMLINK_REFUSED) without following it", async () => {
    const root = path.join(tmp, "hwlink");
    copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(tmp, "hwtarget"));
    mkdirSync(path.join(root, "e"), { recursive: true });
    symlinkSync(path.join(tmp, "hwtarget/.hankweave"), path.join(root, "e/.hankweave"));
    const got = await all(root);
    expect(got.map((e) => [e.rel, e.kind, e.code])).toEqual([["e", "broken", "SYMLINK_REFUSED"]]);
  });

  it("walks 10⁴ empty folders (100 × 99 + 100) in bounded time and reports folders past the depth bound", async () => {
    // On tmpfs when there is one: 10⁴ mkdirs and their removal cost 20 s on this CI's busy disk,
    // which would measure the disk, not the walk.
    const root = mkdtempSync(path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "fleet-wide-"));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    for (let i = 0; i < 100; i++) {
      mkdirSync(path.join(root, `d${i}`));
      for (let j = 0; j < 99; j++) mkdirSync(path.join(root, `d${i}`, `e${j}`));
    }
    copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(root, "d50/e50/x"));
    const t0 = performance.now();
    let folders = 0;
    const got = await all(root, { onFolder: (n: number) => (folders = n) });
    const ms = performance.now() - t0;
    expect(got.map((e) => e.rel)).toEqual(["d50/e50/x"]);
    expect(folders).toBe(1 + 100 + 9_900 + 1);
    expect(ms).toBeLessThan(10_000);
    const deep = path.join(tmp, "deep");
    mkdirSync(path.join(deep, "1/2/3/4"), { recursive: true });
    const bounded = await all(deep, { maxDepth: 2 });
    expect(bounded.map((e) => [e.rel, e.code, e.execution])).toEqual([["1/2/3", "FLEET_TOO_DEEP", false]]);
  });

  it("reports an unreadable folder as a broken row with PERMISSION_DENIED (as an unprivileged user: root reads through chmod 000)", () => {
    const root = path.join(tmp, "unreadable");
    copyExec(path.join(FIX, "diet/ok-finished-run"), path.join(root, "ok"));
    mkdirSync(path.join(root, "locked/inner"), { recursive: true });
    chmodSync(tmp, 0o755);
    chmodSync(path.join(root, "locked"), 0o000);
    // Root (uid 0) is not stopped by chmod 000: run discovery as `nobody` so the folder really fails.
    const script = `import { discoverExecutions } from ${JSON.stringify(path.join(REPO, "packages/fleet/src/discover.ts"))};
const rows = []; for await (const e of discoverExecutions(${JSON.stringify(root)})) rows.push([e.rel, e.kind, e.code, e.execution]);
rows.sort((a, b) => a[0].localeCompare(b[0])); console.log(JSON.stringify(rows));
try { for await (const e of discoverExecutions(${JSON.stringify(path.join(root, "locked"))})) void e; console.log("no error"); } catch (e) { console.log(e.code); }`;
    const asNobody = process.getuid?.() === 0;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: REPO, encoding: "utf8", ...(asNobody ? { uid: 65534, gid: 65534 } : {}),
    });
    chmodSync(path.join(root, "locked"), 0o755);
    expect(r.stderr).toBe("");
    const [rows, rootErr] = r.stdout.trim().split("\n");
    expect(JSON.parse(rows!)).toEqual([["locked", "broken", "PERMISSION_DENIED", false], ["ok", "plain", null, true]]);
    expect(rootErr).toBe("PERMISSION_DENIED");
  });
});

describe.runIf(existsSync(CONF))("discoverExecutions on the conformance executions", () => {
  it("lists every conformance execution: plain journals, and budget-exceeded-replay without one", async () => {
    const got = await all(CONF);
    expect(got.length).toBeGreaterThanOrEqual(7);
    for (const e of got) expect([e.rel, e.kind, e.code]).toEqual([e.rel, e.rel === "budget-exceeded-replay" ? "none" : "plain", null]);
    expect(got.find((e) => e.rel === "plan-gen-execution")?.journalBytes).toBe(4_504_991);
  });
});
describe.runIf(!existsSync(CONF))("discoverExecutions on the conformance executions", () => {
  it("conformance folder is absent: these tests cannot run", () => {
    expect(existsSync(CONF)).toBe(false);
  });
});
