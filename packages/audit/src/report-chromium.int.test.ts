import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { writeReport } from "./report-html.js";
import { CONF, copyExecution } from "./testing/plant.js";
import { writeSyntheticExecution } from "./testing/synthetic.js";

/** Screenshots are kept here (gitignored) as test artifacts. */
const ARTIFACTS = path.resolve(import.meta.dirname, "../../../test-artifacts");
const CHROMIUM_TIMEOUT_MS = 60_000;

function findChromium(): string | null {
  for (const c of [process.env.CHROMIUM, "chromium", "chromium-browser", "google-chrome"]) {
    if (!c) continue;
    const r = spawnSync("sh", ["-c", `command -v ${c}`], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return null;
}

/** Run headless Chromium on a local file; returns stdout (for --dump-dom) and stderr (console log). */
function chromium(bin: string, file: string, extra: string[]): { stdout: string; stderr: string } {
  const profile = mkdtempSync(path.join(os.tmpdir(), "hw-chromium-"));
  const r = spawnSync(bin, [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
    ...extra, `file://${file}`,
  ], { encoding: "utf8", timeout: CHROMIUM_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw r.error;
  return { stdout: r.stdout, stderr: r.stderr };
}

/** Console messages and page errors Chromium logged (page console output appears as `INFO:CONSOLE:<line>] "…"`). */
function consoleErrors(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /CONSOLE[(:]|Uncaught|Refused to|Failed to load resource|Not allowed to load/.test(l));
}

const CHROME = findChromium();

describe("the HTML report in real headless Chromium", () => {
  it("needs chromium (CI installs it with: apt-get install -y chromium)", () => {
    expect(CHROME, "chromium not found: apt-get update && apt-get install -y chromium").not.toBeNull();
  });

  it.runIf(CHROME !== null)("detects console errors (the check itself can fail)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hw-console-"));
    const file = path.join(dir, "bad.html");
    writeFileSync(file, '<!doctype html><html><body><script>console.error("planted")</script></body></html>');
    expect(consoleErrors(chromium(CHROME as string, file, ["--dump-dom"]).stderr).join("\n")).toContain("planted");
  });

  it.runIf(CHROME !== null)("renders the all-outcomes execution without console errors, one bar per codon attempt, and a screenshot", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hw-report-"));
    const exec = path.join(dir, "synthetic");
    const made = writeSyntheticExecution(exec, { repeat: 1 });
    const out = path.join(dir, "report.html");
    const r = await writeReport(exec, out);
    expect(r.attempts).toBe(made.attempts);
    const html = readFileSync(out, "utf8");
    // Self-contained: no script, no stylesheet link, no external URL.
    expect(html).not.toMatch(/<script|<link|<img|<iframe|url\(|https?:\/\//i);
    const dom = chromium(CHROME as string, out, ["--dump-dom"]);
    expect(consoleErrors(dom.stderr)).toEqual([]);
    expect((dom.stdout.match(/data-codon-attempt=/g) ?? []).length).toBe(made.attempts);
    for (const o of ["completed", "failed", "skipped", "running", "crashed"]) expect(dom.stdout).toContain(`data-outcome="${o}"`);
    expect(dom.stdout).toContain("test · attempt 2");
    expect(dom.stdout).toContain("review#1");
    mkdirSync(ARTIFACTS, { recursive: true });
    const png = path.join(ARTIFACTS, "report.png");
    const shot = chromium(CHROME as string, out, ["--window-size=1300,1700", `--screenshot=${png}`]);
    expect(consoleErrors(shot.stderr)).toEqual([]);
    expect(readFileSync(png).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(statSync(png).size).toBeGreaterThan(20_000);
  });

  it.runIf(CHROME !== null && existsSync(CONF))("renders plan-gen-execution: 17 bars for its 17 codon attempts and its findings", async () => {
    const exec = copyExecution("plan-gen-execution");
    const out = path.join(path.dirname(exec), "plan-gen.html");
    const r = await writeReport(exec, out);
    expect(r.attempts).toBe(17);
    const dom = chromium(CHROME as string, out, ["--dump-dom"]);
    expect(consoleErrors(dom.stderr)).toEqual([]);
    expect((dom.stdout.match(/data-codon-attempt=/g) ?? []).length).toBe(17);
    expect(dom.stdout).toContain("UNKNOWN_CODON");
    mkdirSync(ARTIFACTS, { recursive: true });
    chromium(CHROME as string, out, ["--window-size=1300,2400", `--screenshot=${path.join(ARTIFACTS, "report-plan-gen.png")}`]);
    expect(existsSync(path.join(ARTIFACTS, "report-plan-gen.png"))).toBe(true);
  });
});

