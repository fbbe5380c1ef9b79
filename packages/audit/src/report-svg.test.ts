import { describe, expect, it } from "vitest";
import type { CodonAttempt, RunSummary } from "./audit-types.js";
import { attemptLabel, esc, formatDuration, money, timelineSvg } from "./report-svg.js";

const zero = { inputTokens: 0, outputTokens: 0, cacheCreationTokens: 0, cacheReadTokens: 0 };
function attempt(over: Partial<CodonAttempt>): CodonAttempt {
  return {
    run: "r", codon: "c", attempt: 1, index: 0, status: "completed", outcome: "completed", startLine: 1, endLine: 9,
    startTime: "2026-03-05T12:00:00.000Z", endTime: "2026-03-05T12:01:00.000Z", cost: 0.5, tokens: zero, loop: null, failureReason: null, reason: null, ...over,
  };
}

describe("report SVG pieces", () => {
  it("escapes markup in every interpolated value", () => {
    expect(esc(`<b a="1">'&'</b>`)).toBe("&lt;b a=&quot;1&quot;&gt;&#39;&amp;&#39;&lt;/b&gt;");
    const run: RunSummary = {
      run: "r", status: "running", startLine: 0, endLine: null, startTime: "2026-03-05T12:00:00.000Z", endTime: null, cost: 0.5, tokens: zero,
      attempts: [attempt({ codon: "<script>alert(1)</script>" })],
    };
    const svg = timelineSvg(run, "2026-03-05T12:02:00.000Z");
    expect(svg).not.toContain("<script>");
    expect(svg).toContain("&lt;script&gt;");
    expect((svg.match(/data-codon-attempt=/g) ?? []).length).toBe(1);
  });

  it("labels loop iterations and retries", () => {
    expect(attemptLabel(attempt({ codon: "review#1", loop: { loopId: "l", iteration: 1, codonIndexInLoop: 0 } }))).toBe("review#1");
    expect(attemptLabel(attempt({ codon: "review", loop: { loopId: "l", iteration: 2, codonIndexInLoop: 0 } }))).toBe("review#2");
    expect(attemptLabel(attempt({ codon: "test", attempt: 2 }))).toBe("test · attempt 2");
  });

  it("formats durations and dollars for people", () => {
    expect([120, 4200, 187_000, 7_500_000, -1].map(formatDuration)).toEqual(["120ms", "4.2s", "3m 07s", "2h 05m", "?"]);
    expect(money(0.021693)).toBe("$0.0217");
    expect(money(85.9412)).toBe("$85.94");
  });
});
