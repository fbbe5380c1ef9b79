import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { summarizeExecution, blameExecution } from "@hankweave-journal/audit";
import { runCli } from "../main.js";
import { memoryIO } from "../io.js";
import { COMMANDS } from "../commands.js";

const MAIN_JOB = path.resolve(import.meta.dirname, "../../../../fixtures/main-job/exec");

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO();
  const code = await runCli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

describe("summary, blame and export commands", () => {
  it("summary prints one screen and --json the same content as the library", async () => {
    const text = await cli(["summary", MAIN_JOB]);
    expect(text.code).toBe(0);
    expect(text.out).toContain("step-4-flaky ×2");
    expect(text.out).toContain("crashed   step-7-implement: unknown: Server crashed");
    const json = await cli(["summary", MAIN_JOB, "--json"]);
    expect(JSON.parse(json.out)).toEqual(JSON.parse(JSON.stringify(await summarizeExecution(MAIN_JOB))));
  });

  it("blame prints the line that set a value, --json the library's object; a bad path is usage (2), a missing one failure (1)", async () => {
    const text = await cli(["blame", MAIN_JOB, "runs[0].status"]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^runs\[0\]\.status = "completed"/);
    expect(text.out).toContain("set by line 1736");
    const json = await cli(["blame", MAIN_JOB, "runs[2].codons[10].partialCost", "--history", "--json"]);
    expect(JSON.parse(json.out)).toEqual(JSON.parse(JSON.stringify(await blameExecution(MAIN_JOB, "runs[2].codons[10].partialCost", { history: true }))));
    const hist = await cli(["blame", MAIN_JOB, "runs[2].codons[10].partialCost", "--history"]);
    expect(hist.out).toMatch(/CostsIncremented\s+0\.0055569\s+\(\+0\.0055569\)/);
    expect((await cli(["blame", MAIN_JOB, "runs[0"])).code).toBe(2);
    const missing = await cli(["blame", MAIN_JOB, "runs[5].status"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("BLAME_PATH_NOT_FOUND");
  });

  it("export writes a trace to -o FILE or stdout, and refuses an unknown format and a path inside .hankweave/", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "cli-export-"));
    const out = path.join(dir, "t.json");
    const r = await cli(["export", MAIN_JOB, "--format", "trace", "-o", out, "--json"]);
    expect(r.code).toBe(0);
    const info = JSON.parse(r.out);
    const file = JSON.parse(readFileSync(out, "utf8"));
    expect(file.traceEvents.length).toBe(info.events);
    const stdout = await cli(["export", MAIN_JOB, "--format", "trace"]);
    expect(JSON.parse(stdout.out)).toEqual(file);
    const unknown = await cli(["export", MAIN_JOB, "--format", "svg"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("EXPORT_FORMAT_UNKNOWN");
    expect((await cli(["export", MAIN_JOB])).code).toBe(2);
    mkdirSync(path.join(dir, "x", ".hankweave"), { recursive: true });
    const inside = await cli(["export", MAIN_JOB, "--format", "trace", "-o", path.join(dir, "x", ".hankweave", "t.json")]);
    expect(inside.code).toBe(1);
    expect(inside.err).toContain("OUTPUT_IN_EXECUTION");
  });

  it("each command's --help lists every flag with an example", () => {
    for (const name of ["summary", "blame", "export"]) expect(COMMANDS.find((x) => x.name === name)!.help).toMatch(/Examples:\n  hankweave-journal /);
    expect(COMMANDS.find((x) => x.name === "summary")!.help).toContain("--json");
    const exp = COMMANDS.find((x) => x.name === "export")!.help;
    for (const flag of ["--format", "-o, --out", "--json"]) expect(exp).toContain(flag);
    const bl = COMMANDS.find((x) => x.name === "blame")!.help;
    for (const flag of ["--history", "--json"]) expect(bl).toContain(flag);
  });
});
