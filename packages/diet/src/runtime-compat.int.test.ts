// The five mismatches with the reference runtime found in issue 13 (each test fails on the code
// before the fix): the torn tail, pointers only at the two body sites of a runtime-made diet, a
// journal already holding a cas-shaped contentRef, totalEvents as the runtime counts, and
// eventSchemaVersion only from a sidecar. Runtime-made diets are built here with the zstd CLI
// (an independent encoder), as the runtime writes them: one frame, manifest without our extras.
import * as fs from "node:fs";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet, planDiet } from "./diet.js";
import { openReader } from "./open-reader.js";
import { restoreJournal } from "./restore.js";
import { verifyDiet } from "./verify-diet.js";
import { readManifest } from "./manifest.js";
import { codeOf, finishedJournal, linesToBytes, rmExec, snapshotDir, tempExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

const sha = (b: Buffer | string): string => createHash("sha256").update(b).digest("hex");
const ev = (i: number, type: string, data: unknown): string =>
  JSON.stringify({ id: `e${i}`, timestamp: new Date(1772712167696 + i).toISOString(), type, data });
const ref = (body: string) => ({ sha256: sha(body), bytes: Buffer.byteLength(body), encoding: "utf-8", ref: "cas" });
const zstdCli = (input: Buffer, level: number): Buffer => execFileSync("zstd", [`-${level}`, "-c", "-q"], { input, maxBuffer: 1 << 30 });

function exec(journal: Buffer): string {
  const e = tempExec(journal);
  made.push(e);
  return e;
}

describe("the unterminated final fragment is never rewritten", () => {
  it("a torn file.updated tail with a 6,000-byte body stays verbatim in the pointer journal and restores byte for byte", async () => {
    const torn = ev(999, "file.updated", { path: "a.md", filename: "a.md", content: "t".repeat(6000) });
    const original = Buffer.concat([finishedJournal(["x".repeat(5000)]), Buffer.from(torn)]);
    const e = exec(original);
    const r = await applyDiet(e, { force: true });
    expect(r.bodies.moved).toBe(1); // the terminated one only
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", layoutOf(e).dietedJournal], { maxBuffer: 1 << 30 }).toString("utf8");
    expect(pointer.endsWith(`\n${torn}`)).toBe(true);
    expect((await readManifest(layoutOf(e))).endsWithNewline).toBe(false);
    const reader = await openReader(e);
    expect((await linesToBytes(reader)).equals(original)).toBe(true);
    await reader.close();
    await restoreJournal(e);
    expect(fs.readFileSync(layoutOf(e).journal).equals(original)).toBe(true);
  });
});

describe("a diet made by the reference runtime: pointers only at the two body sites", () => {
  const bodyA = "A".repeat(5000);
  const bodyB = "é".repeat(3000);
  /** Original lines and the pointer lines the runtime would have written for them. */
  const pairs: [string, string][] = [
    [ev(0, "state.transition", { transitionType: "RunStarted", runId: "r1" }), ""],
    [ev(1, "file.updated", { path: "a.md", filename: "a.md", content: bodyA }), ev(1, "file.updated", { path: "a.md", filename: "a.md", contentRef: ref(bodyA) })],
    // Data that looks like a pointer but is not at a body site: no blob exists for these.
    [ev(2, "tool.result", { resultRef: ref("never stored"), note: "x" }), ""],
    [ev(3, "file.updated", { path: "b.md", filename: "b.md", meta: { contentRef: ref("also never stored") }, content: "small" }), ""],
    [ev(4, "info", { contentRef: ref("not a site type") }), ""],
    // The same pointer text at the site and, first, nested elsewhere: only the site's is a pointer.
    [
      ev(5, "state.snapshot", { recentFileAccess: { path: "b.md", other: { contentRef: ref(bodyB) }, content: bodyB } }),
      ev(5, "state.snapshot", { recentFileAccess: { path: "b.md", other: { contentRef: ref(bodyB) }, contentRef: ref(bodyB) } }),
    ],
    [ev(6, "state.transition", { transitionType: "RunCompleted", runId: "r1" }), ""],
  ];

  function runtimeDiet(): { e: string; original: Buffer } {
    const original = Buffer.from(pairs.map(([o]) => o + "\n").join(""));
    const pointer = Buffer.from(pairs.map(([o, p]) => (p || o) + "\n").join(""));
    const e = exec(Buffer.alloc(0));
    const l = layoutOf(e);
    fs.rmSync(l.journal);
    fs.writeFileSync(l.dietedJournal, zstdCli(pointer, 19));
    for (const body of [bodyA, bodyB]) {
      fs.mkdirSync(l.casShard(sha(body)), { recursive: true });
      fs.writeFileSync(l.casBlob(sha(body)), zstdCli(Buffer.from(body), 19));
    }
    fs.writeFileSync(l.manifest, JSON.stringify({
      schemaVersion: 1, dietVersion: 1, eventSchemaVersion: 2, totalEvents: pairs.length, originalSha256: sha(original),
      originalBytes: original.length, segments: [{ id: 0, events: pairs.length }], dietedAt: "2026-12-01T00:00:00.000Z",
    }));
    return { e, original };
  }

  it("reads, verifies and restores it byte for byte (today: CAS_MISSING for the look-alikes)", async () => {
    const { e, original } = runtimeDiet();
    const reader = await openReader(e);
    expect(reader.kind).toBe("dieted");
    expect((await linesToBytes(reader)).equals(original)).toBe(true);
    expect((await reader.getLine(5))?.bytes.toString("utf8")).toBe(pairs[5][0]);
    await reader.close();
    expect((await verifyDiet(e)).originalSha256).toBe(sha(original));
    expect((await restoreJournal(e)).status).toBe("restored");
    expect(fs.readFileSync(layoutOf(e).journal).equals(original)).toBe(true);
  });

  it("a body-site contentRef whose sha is a path is still CAS_BAD_REF", async () => {
    const { e } = runtimeDiet();
    const l = layoutOf(e);
    const pointer = execFileSync("zstd", ["-d", "-c", "-q", l.dietedJournal]).toString("utf8");
    fs.writeFileSync(l.dietedJournal, zstdCli(Buffer.from(pointer.replace(sha(bodyA), "../".repeat(21) + "x")), 3));
    const reader = await openReader(e);
    expect(await codeOf(linesToBytes(reader))).toBe("CAS_BAD_REF");
    await reader.close();
  });
});

describe("a journal already holding a cas-shaped contentRef at a body site is refused", () => {
  const cases: [string, string][] = [
    ["file.updated data.contentRef", ev(1, "file.updated", { path: "a.md", filename: "a.md", contentRef: ref("someone else's") })],
    ["state.snapshot data.recentFileAccess.contentRef", ev(1, "state.snapshot", { recentFileAccess: { path: "a.md", contentRef: { ...ref("x"), sha256: "not hex" } } })],
  ];
  for (const [site, line] of cases) {
    it(`${site} → CONTENT_REF_PRESENT with a hint, for diet and --dry-run; nothing changes`, async () => {
      const journal = Buffer.concat([Buffer.from(line + "\n"), finishedJournal(["x".repeat(5000)])]);
      const e = exec(journal);
      const before = snapshotDir(e);
      expect(await codeOf(planDiet(e, { force: true }))).toBe("CONTENT_REF_PRESENT");
      let hint = "";
      try {
        await applyDiet(e, { force: true });
      } catch (err) {
        expect((err as { code: string }).code).toBe("CONTENT_REF_PRESENT");
        hint = (err as { hint?: string }).hint ?? "";
      }
      expect(hint).toMatch(/plain/);
      expect(snapshotDir(e)).toEqual(before);
    });
  }

  it("a cas-shaped …Ref elsewhere (not a body site) does not stop the diet", async () => {
    const line = ev(1, "tool.result", { resultRef: ref("data"), contentRef: ref("data") });
    const journal = Buffer.concat([Buffer.from(line + "\n"), finishedJournal(["x".repeat(5000)])]);
    const e = exec(journal);
    expect((await applyDiet(e, { force: true })).status).toBe("dieted");
    await restoreJournal(e);
    expect(fs.readFileSync(layoutOf(e).journal).equals(journal)).toBe(true);
  });
});

describe("the manifest's counts as the reference runtime writes them", () => {
  it("totalEvents counts the complete lines JSON.parse accepts (123, null, {} included; blank, corrupt and the torn tail not)", async () => {
    const odd = ["123", "null", "{}", "[1,2]", '"text"', "", "   ", '{"id":"broken', ' {"a":1} '].join("\n") + "\n";
    const journal = Buffer.concat([finishedJournal(["x".repeat(5000)], "RunCompleted", 2), Buffer.from(odd), Buffer.from('{"torn":1}')]);
    const e = exec(journal);
    await applyDiet(e, { force: true });
    const complete = journal.toString("utf8").split("\n").slice(0, -1);
    const expected = complete.filter((l) => {
      try {
        JSON.parse(l);
        return true;
      } catch {
        return false;
      }
    }).length;
    const m = await readManifest(layoutOf(e));
    expect(expected).toBe(finishedJournal(["x".repeat(5000)], "RunCompleted", 2).toString().split("\n").length - 1 + 6);
    expect(m.totalEvents).toBe(expected);
    expect(m.segments).toEqual([{ id: 0, events: expected }]);
  });

  it("eventSchemaVersion is written only when the sidecar had one", async () => {
    const journal = finishedJournal(["x".repeat(5000)]);
    const bare = exec(journal);
    await applyDiet(bare, { force: true });
    expect(fs.readFileSync(layoutOf(bare).manifest, "utf8")).not.toContain("eventSchemaVersion");
    expect((await readManifest(layoutOf(bare))).eventSchemaVersion).toBeUndefined();

    const withSidecar = exec(journal);
    const lines = journal.toString("utf8").split("\n").filter((x) => x !== "");
    fs.writeFileSync(layoutOf(withSidecar).sidecar, JSON.stringify({
      schemaVersion: 1, eventSchemaVersion: 7, totalEvents: lines.length, byteLength: journal.length, lastEventId: JSON.parse(lines[lines.length - 1]).id,
    }));
    await applyDiet(withSidecar, { force: true });
    const text = fs.readFileSync(layoutOf(withSidecar).manifest, "utf8");
    expect(Object.keys(JSON.parse(text)).slice(0, 4)).toEqual(["schemaVersion", "dietVersion", "eventSchemaVersion", "totalEvents"]);
    expect((await readManifest(layoutOf(withSidecar))).eventSchemaVersion).toBe(7);
  });
});
