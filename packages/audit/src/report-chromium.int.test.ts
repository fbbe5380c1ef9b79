import { spawn, spawnSync } from "node:child_process";
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

/**
 * Run headless Chromium on a local file; returns stdout (for --dump-dom) and stderr (console log).
 * Asynchronous, so the tests' runs overlap: a run is mostly Chromium's start-up latency (measured
 * 4.4 s wall for 1.1 CPU s under load). One run may both --dump-dom and --screenshot.
 */
function chromium(bin: string, file: string, extra: string[]): Promise<{ stdout: string; stderr: string }> {
  const profile = mkdtempSync(path.join(os.tmpdir(), "hw-chromium-"));
  return new Promise((resolve, reject) => {
    const c = spawn(bin, [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
      ...extra, `file://${file}`,
    ], { stdio: ["ignore", "pipe", "pipe"], timeout: CHROMIUM_TIMEOUT_MS, killSignal: "SIGKILL" });
    let stdout = "";
    let stderr = "";
    c.stdout.setEncoding("utf8").on("data", (d: string) => { stdout += d; });
    c.stderr.setEncoding("utf8").on("data", (d: string) => { stderr += d; });
    c.on("error", reject);
    c.on("close", () => resolve({ stdout, stderr }));
  });
}

/** Console messages and page errors Chromium logged (page console output appears as `INFO:CONSOLE:<line>] "…"`). */
function consoleErrors(stderr: string): string[] {
  return stderr.split("\n").filter((l) => /CONSOLE[(:]|Uncaught|Refused to|Failed to load resource|Not allowed to load/.test(l));
}

const CHROME = findChromium();
const MAIN_JOB = path.resolve(import.meta.dirname, "../../../fixtures/main-job/exec");

/**
 * A probe copy of a report: the same page plus one script (the report itself has none) that reads
 * what the renderer shows — `innerText` (no <title> tooltips, no closed <details> content) and
 * the layout boxes of a group's table closed, then opened — into the DOM, base64 JSON.
 */
function probeCopy(html: string, file: string): void {
  const script = `<script>(() => {
    const r = { closedText: document.body.innerText };
    const d = document.querySelector("details.group");
    const t = d.querySelector("table");
    // Chromium keeps layout boxes of closed <details> content (content-visibility: hidden), so ask
    // whether the table is visible and how tall the group is.
    r.closedVisible = t.checkVisibility();
    r.closedGroupHeight = d.getBoundingClientRect().height;
    r.closedHeight = document.body.scrollHeight;
    d.open = true;
    r.openVisible = t.checkVisibility();
    r.openGroupHeight = d.getBoundingClientRect().height;
    r.openHeight = document.body.scrollHeight;
    r.openText = document.body.innerText;
    r.groups = document.querySelectorAll("details.group").length;
    const pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(r))));
    document.body.appendChild(pre);
  })()</script>`;
  writeFileSync(file, html.replace("</body>", `${script}</body>`));
}

interface Probe {
  closedText: string;
  openText: string;
  closedVisible: boolean;
  openVisible: boolean;
  closedGroupHeight: number;
  openGroupHeight: number;
  closedHeight: number;
  openHeight: number;
  groups: number;
}

function probeResult(dom: string): Probe {
  const m = /<pre id="probe">([A-Za-z0-9+/=]+)<\/pre>/.exec(dom);
  if (m === null) throw new Error("the probe did not run");
  return JSON.parse(Buffer.from(m[1], "base64").toString("utf8"));
}

// Concurrent: each test waits mostly on Chromium starting, and they share nothing.
describe.concurrent("the HTML report in real headless Chromium", () => {
  it("needs chromium (CI installs it with: apt-get install -y chromium)", () => {
    expect(CHROME, "chromium not found: apt-get update && apt-get install -y chromium").not.toBeNull();
  });

  it.runIf(CHROME !== null)("detects console errors (the check itself can fail)", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hw-console-"));
    const file = path.join(dir, "bad.html");
    writeFileSync(file, '<!doctype html><html><body><script>console.error("planted")</script></body></html>');
    expect(consoleErrors((await chromium(CHROME as string, file, ["--dump-dom"])).stderr).join("\n")).toContain("planted");
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
    mkdirSync(ARTIFACTS, { recursive: true });
    const png = path.join(ARTIFACTS, "report.png");
    // One run gives the DOM and the screenshot.
    const dom = await chromium(CHROME as string, out, ["--dump-dom", "--window-size=1300,1700", `--screenshot=${png}`]);
    const shot = dom;
    expect(consoleErrors(dom.stderr)).toEqual([]);
    expect((dom.stdout.match(/data-codon-attempt=/g) ?? []).length).toBe(made.attempts);
    for (const o of ["completed", "failed", "skipped", "running", "crashed"]) expect(dom.stdout).toContain(`data-outcome="${o}"`);
    expect(dom.stdout).toContain("test · attempt 2");
    expect(dom.stdout).toContain("review#1");
    expect(consoleErrors(shot.stderr)).toEqual([]);
    expect(readFileSync(png).subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    expect(statSync(png).size).toBeGreaterThan(20_000);
  });

  it.runIf(CHROME !== null && existsSync(CONF))("renders plan-gen-execution: 17 bars for its 17 codon attempts and its findings", async () => {
    const exec = copyExecution("plan-gen-execution");
    const out = path.join(path.dirname(exec), "plan-gen.html");
    const r = await writeReport(exec, out);
    expect(r.attempts).toBe(17);
    mkdirSync(ARTIFACTS, { recursive: true });
    const dom = await chromium(CHROME as string, out, ["--dump-dom", "--window-size=1300,2400", `--screenshot=${path.join(ARTIFACTS, "report-plan-gen.png")}`]);
    expect(consoleErrors(dom.stderr)).toEqual([]);
    expect((dom.stdout.match(/data-codon-attempt=/g) ?? []).length).toBe(17);
    expect(dom.stdout).toContain("UNKNOWN_CODON");
    expect(existsSync(path.join(ARTIFACTS, "report-plan-gen.png"))).toBe(true);
  });

  it.runIf(CHROME !== null)("shows why attempts failed, crashed or were skipped as page text, durations on bars, and groups that open and close", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hw-report-mj-"));
    const out = path.join(dir, "main-job.html");
    const r = await writeReport(MAIN_JOB, out);
    expect(r.attempts).toBe(18);
    const html = readFileSync(out, "utf8");
    expect(html).not.toMatch(/<script|<link|<img|<iframe|url\(|https?:\/\//i);
    const probe = path.join(dir, "probe.html");
    probeCopy(html, probe);
    mkdirSync(ARTIFACTS, { recursive: true });
    const png = path.join(ARTIFACTS, "report-main-job.png");
    // The probe (another file) and the screenshot of the report run at once.
    const [probed, shot] = await Promise.all([
      chromium(CHROME as string, probe, ["--dump-dom"]),
      chromium(CHROME as string, out, ["--window-size=1400,2600", `--screenshot=${png}`]),
    ]);
    const p = probeResult(probed.stdout);
    // Reasons are rendered text (innerText has no <title> tooltip), next to their attempt and with their line.
    for (const reason of ["Server crashed", "Agent process exited with code 1", "skipped during preparing", "Budget exceeded: Cost $1.2689 exceeded limit $1.0100"]) {
      expect(p.closedText).toContain(reason);
    }
    expect(p.closedText).toMatch(/step-7-implement: unknown: Server crashed \(during running, exit code -1\) — journal line 945/);
    // Durations are written on or next to the bars.
    expect(p.closedText).toMatch(/1m 32s · \$0\.7618/);
    // The skipped codon's drop of the cost line is explained where it drops.
    expect(p.closedText).toMatch(/line 1493: step-9-skim skipped: a skipped codon costs 0/);
    expect(p.closedText).toContain("a skipped codon counts 0");
    // Retries and loop iterations are <details> groups: closed (its table not visible), then open.
    expect(p.groups).toBeGreaterThanOrEqual(3);
    expect(p.closedVisible).toBe(false);
    expect(p.openVisible).toBe(true);
    expect(p.openGroupHeight).toBeGreaterThan(p.closedGroupHeight);
    expect(p.openHeight).toBeGreaterThan(p.closedHeight);
    expect(p.openText.length).toBeGreaterThan(p.closedText.length);
    // Findings are grouped by code with their count and first lines.
    expect(p.closedText).toMatch(/NO_TARGET_RECORD ×23 — .* first lines \d+(, \d+){4}, …/);
    expect(consoleErrors(shot.stderr)).toEqual([]);
    expect(statSync(png).size).toBeGreaterThan(20_000);
  });
});
