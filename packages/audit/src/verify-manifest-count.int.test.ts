// `verify` on a dieted journal holding lines JSON.parse accepts but that are not events (`123`,
// `null`, `{}`): the manifest's totalEvents counts them, as the reference runtime does (format
// §5.1), so verify must not call the manifest wrong (issue 13: a MANIFEST_INVALID false alarm).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf } from "@hankweave-journal/core";
import { applyDiet, readManifest } from "@hankweave-journal/diet";
import { verifyExecution } from "./verify.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function line(i: number, type: string, data: unknown): string {
  return JSON.stringify({ id: `e${i}`, timestamp: new Date(1772712167696 + i).toISOString(), type, data });
}

describe("verify accepts the reference runtime's totalEvents", () => {
  it("no MANIFEST_INVALID for a diet of a journal with 123 / null / {} lines; a wrong count is still one", async () => {
    const exec = fs.mkdtempSync(path.join(os.tmpdir(), "hw-verify-count-"));
    made.push(exec);
    const l = layoutOf(exec);
    fs.mkdirSync(l.eventsDir, { recursive: true });
    const lines = [
      line(0, "state.transition", { transitionType: "RunStarted", runId: "r1", transition: { type: "RunStarted", data: { runId: "r1" } } }),
      "123", "null", "{}",
      line(1, "file.updated", { path: "a.md", filename: "a.md", content: "x".repeat(5000) }),
      line(2, "state.transition", { transitionType: "RunCompleted", runId: "r1", transition: { type: "RunCompleted", data: { runId: "r1" } } }),
    ];
    fs.writeFileSync(l.journal, lines.join("\n") + "\n");
    await applyDiet(exec, { force: true });
    expect((await readManifest(l)).totalEvents).toBe(6);
    const r = await verifyExecution(exec);
    expect(r.findings.filter((f) => f.code === "MANIFEST_INVALID")).toEqual([]);

    const m = JSON.parse(fs.readFileSync(l.manifest, "utf8"));
    fs.writeFileSync(l.manifest, JSON.stringify({ ...m, totalEvents: 5 }));
    const wrong = await verifyExecution(exec);
    expect(wrong.findings.filter((f) => f.code === "MANIFEST_INVALID").map((f) => f.details)).toEqual([
      expect.objectContaining({ field: "totalEvents", actual: 5 }),
    ]);
  });
});
