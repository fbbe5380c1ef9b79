/**
 * The progress line on a real terminal (tmux, a pty): after a long command the screen, scrollback
 * included, holds the result and no progress remnant, although the raw terminal stream shows the
 * line was drawn; with stderr redirected to a file (not a TTY) no progress byte appears there.
 * Timings are shortened through HANKWEAVE_PROGRESS_AFTER_MS / _EVERY_MS so the line is drawn
 * many times during a command of a second or two.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(HERE, "../bin/hankweave-journal.js");
const FIXTURE = path.resolve(HERE, "../../../fixtures/main-job/exec");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cli-pty-"));
const SOCKET = `hj-pty-${process.pid}`;
afterAll(() => {
  spawnSync("tmux", ["-L", SOCKET, "kill-server"]);
  fs.rmSync(tmp, { recursive: true, force: true });
});

const tmux = (...args: string[]) => spawnSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The progress line's text: "<label>: <n> <unit> of <m> <unit> read". */
const PROGRESS = /\b(kB|MB|GB) of [\d.]+ (kB|MB|GB) read|ETA \d/;

/** Run `shell` in a fresh tmux pane; returns the whole screen with scrollback and the raw pane output. */
async function inTerminal(name: string, shell: string): Promise<{ screen: string; raw: string }> {
  const raw = path.join(tmp, `${name}.raw`);
  const env = `HANKWEAVE_PROGRESS_AFTER_MS=0 HANKWEAVE_PROGRESS_EVERY_MS=20 NO_COLOR=1`;
  const r = tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "40", `sleep 0.5; ${env} ${shell}; echo __DONE__; sleep 60`);
  expect(r.status, r.stderr).toBe(0);
  tmux("pipe-pane", "-t", name, "-o", `cat >> ${raw}`);
  let screen = "";
  for (let i = 0; i < 1200 && !screen.includes("__DONE__"); i++) {
    await sleep(100);
    screen = tmux("capture-pane", "-p", "-t", name, "-S", "-2000").stdout;
  }
  await sleep(200);
  tmux("kill-session", "-t", name);
  return { screen, raw: fs.existsSync(raw) ? fs.readFileSync(raw, "latin1") : "" };
}

if (hasTmux) describe("the progress line on a terminal", () => {
  it("is drawn during a long command and leaves no remnant: the screen holds the result", async () => {
    const { screen, raw } = await inTerminal("audit", `node ${BIN} audit ${FIXTURE} --run nope`);
    expect(screen).toContain("__DONE__");
    expect(raw).toMatch(PROGRESS); // it was drawn …
    expect(screen).toMatch(/\d+ rows of \d+ transitions/); // … the result is there …
    expect(screen).not.toMatch(PROGRESS); // … and no progress text survives, in the scrollback either
    for (const line of screen.split("\n")) expect(line.startsWith("audit: ")).toBe(false);
  }, 180_000);

  it("writes no progress byte when stderr is not a terminal", async () => {
    const err = path.join(tmp, "stderr.txt");
    const { screen } = await inTerminal("redirected", `node ${BIN} audit ${FIXTURE} --run nope 2> ${err}`);
    expect(screen).toMatch(/\d+ rows of \d+ transitions/);
    const text = fs.readFileSync(err, "latin1");
    expect(text).not.toMatch(PROGRESS);
    expect(text).not.toContain("\x1b[2K");
    expect(text).not.toContain("\r");
  }, 180_000);
});

else {
  it("tmux is absent: these tests cannot run", () => {
    expect(hasTmux).toBe(false);
  });
}
