// state.json saves never follow a symbolic link out of the execution (issue 14 class 2), and use
// the one durability default.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { writeStateText } from "./state-file.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const OUTSIDE = "outside bytes that must never change\n";

function setup(): { exec: string; victim: string } {
  const root = mkdtempSync(`${tmpdir()}/hws-nofollow-`);
  dirs.push(root);
  const exec = path.join(root, "exec");
  mkdirSync(layoutOf(exec).hankweave, { recursive: true });
  const victim = path.join(root, "outside.json");
  writeFileSync(victim, OUTSIDE);
  return { exec, victim };
}

describe("saving state.json never writes through a link", () => {
  it("a state.json.bak that is a link outside is refused (SYMLINK_REFUSED); state.json and the outside file are unchanged", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.state, "old state");
    symlinkSync(victim, l.stateBak);
    await expect(writeStateText(exec, "new state")).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim, "utf8")).toBe(OUTSIDE);
    expect(readFileSync(l.state, "utf8")).toBe("old state");
    expect(existsSync(l.stateTmp)).toBe(false);
  });

  it("a state.json.tmp that is a link outside is unlinked, the save succeeds, the outside file is unchanged", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    writeFileSync(l.state, "old state");
    symlinkSync(victim, l.stateTmp);
    await writeStateText(exec, "new state");
    expect(readFileSync(victim, "utf8")).toBe(OUTSIDE);
    expect(readFileSync(l.state, "utf8")).toBe("new state");
    expect(readFileSync(l.stateBak, "utf8")).toBe("old state");
    expect(existsSync(l.stateTmp)).toBe(false);
  });

  it("a state.json that is a link outside is refused (SYMLINK_REFUSED), its target unchanged, no .bak copied through it", async () => {
    const { exec, victim } = setup();
    const l = layoutOf(exec);
    symlinkSync(victim, l.state);
    await expect(writeStateText(exec, "new state")).rejects.toMatchObject({ code: "SYMLINK_REFUSED" });
    expect(readFileSync(victim, "utf8")).toBe(OUTSIDE);
    expect(existsSync(l.stateBak)).toBe(false);
  });
});
