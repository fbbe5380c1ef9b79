/**
 * Payload builders for the non-transition events, shaped like the conformance journals
 * (`assistant.action`, `tool.result`, `token.usage`, sentinel events, rig events, …).
 */
import { createHash } from "node:crypto";
import type { Corpus } from "./corpus.js";
import { MODELS } from "./hank.js";
import type { Rng } from "./prng.js";
import type { TokenUsage } from "@hankweave-journal/core";

/** Claude Code truncates Read results to about this many characters (conformance: 2,503 max). */
export const READ_RESULT_LIMIT_CHARS = 2500;
/** Bash output is cut at this many characters. */
export const BASH_RESULT_LIMIT_CHARS = 30000;

export type ToolName = "Read" | "Bash" | "Edit" | "Write" | "TodoWrite" | "Grep" | "Glob" | "WebFetch";

/** Tool mix per assistant block (text messages included), close to plan-gen-execution's but with more writes. */
const BLOCK_MIX: [ToolName | "message", number][] = [
  ["message", 0.28], ["Read", 0.28], ["Bash", 0.16], ["Edit", 0.11], ["Write", 0.06], ["TodoWrite", 0.05],
  ["Grep", 0.03], ["Glob", 0.02], ["WebFetch", 0.01],
];

/** Draw the kind of the next assistant block (from `mix`, default the body-heavy one). */
export function drawBlock(r: Rng, mix: readonly [ToolName | "message", number][] = BLOCK_MIX): ToolName | "message" {
  let x = r.next();
  for (const [k, p] of mix) {
    x -= p;
    if (x < 0) return k;
  }
  return "message";
}

/** Token usage of one API response, and its cost under the model's prices. */
export function drawUsage(r: Rng, modelId: string): { tokens: TokenUsage; cost: number } {
  const m = MODELS[modelId];
  const tokens: TokenUsage = {
    inputTokens: r.chance(0.8) ? r.int(1, 12) : r.int(100, 30000),
    outputTokens: r.logNormal(180, 1.2, 1, 32000),
    cacheCreationTokens: r.chance(0.5) ? r.int(0, 9000) : 0,
    cacheReadTokens: r.int(10000, 180000),
  };
  const cost =
    (tokens.inputTokens * m.input + tokens.outputTokens * m.output + tokens.cacheCreationTokens * m.cacheWrite + tokens.cacheReadTokens * m.cacheRead) /
    1_000_000;
  return { tokens, cost };
}

/**
 * Token usage shaped like a real session (the real profile): the prompt cache grows through the
 * codon (`cacheReadTokens` is the context so far), most responses read 1–3 fresh input tokens,
 * and the second block of a message repeats the first one's cache figures (as the runtime logs
 * them, one usage per content block).
 */
export function drawSessionUsage(r: Rng, modelId: string, session: { context: number }, first: TokenUsage | null): { tokens: TokenUsage; cost: number } {
  const m = MODELS[modelId];
  let tokens: TokenUsage;
  if (first) {
    tokens = { ...first, outputTokens: r.chance(0.3) ? first.outputTokens : r.logNormal(150, 1.3, 1, 32000) };
  } else {
    const cacheCreationTokens = r.chance(0.005) ? 0 : r.logNormal(900, 1.3, 50, 80_000);
    tokens = {
      inputTokens: r.chance(0.88) ? r.int(1, 3) : r.logNormal(900, 1.5, 4, 40_000),
      outputTokens: r.chance(0.4) ? r.int(1, 6) : r.logNormal(180, 1.3, 1, 32000),
      cacheCreationTokens,
      cacheReadTokens: session.context,
    };
    session.context += cacheCreationTokens + (r.chance(0.5) ? 0 : r.int(1, 400));
  }
  const cost =
    (tokens.inputTokens * m.input + tokens.outputTokens * m.output + tokens.cacheCreationTokens * m.cacheWrite + tokens.cacheReadTokens * m.cacheRead) /
    1_000_000;
  return { tokens, cost };
}

/** `toolu_01…` ids as Anthropic issues them. */
export function toolUseId(r: Rng): string {
  return `toolu_01${r.base36(22)}`;
}

/** A tool result payload (truncated like the runtime does). */
export function toolResult(codonId: string, id: string, toolName: string, full: string, limit: number, ms: number, isError = false): Record<string, unknown> {
  const truncated = full.length > limit;
  return {
    codonId,
    toolUseId: id,
    toolName,
    result: truncated ? `${full.slice(0, limit)}...` : full,
    truncated,
    originalLength: full.length,
    executionTimeMs: ms,
    isError,
  };
}

/** A model's prose reply of about `chars` characters. */
export function prose(corpus: Corpus, r: Rng, chars: number): string {
  const text = corpus.body("markdown", chars, r);
  return r.chance(0.05) ? `${text}\n✓ Done — next: run the tests → commit` : text;
}

/** `file.updated` data: v1 carries the body inline, v2 its sha256, byte length and source. */
export function fileUpdated(schema: 1 | 2, path: string, content: string, action: "created" | "modified"): Record<string, unknown> {
  const filename = path.slice(path.lastIndexOf("/") + 1);
  if (schema === 1) return { path, filename, content, action };
  const buf = Buffer.from(content, "utf8");
  return { path, filename, sha256: createHash("sha256").update(buf).digest("hex"), bytes: buf.length, source: "agent", action };
}

/** A `filetree.updated` tree of the last 8 touched paths. */
export function fileTree(paths: string[], lastModified: string): Record<string, unknown> {
  const root = new Map<string, { name: string; path: string; isDirectory: boolean; lastModified?: string; children: unknown[] }>();
  const out: unknown[] = [];
  for (const p of paths.slice(-8)) {
    const slash = p.lastIndexOf("/");
    const dir = slash < 0 ? "" : p.slice(0, slash);
    let d = root.get(dir);
    if (!d) {
      d = { name: dir.slice(dir.lastIndexOf("/") + 1), path: dir, isDirectory: true, children: [] };
      root.set(dir, d);
      out.push(d);
    }
    d.children.push({ name: p.slice(slash + 1), path: p, isDirectory: false, lastModified, children: [] });
  }
  return { tree: out };
}

/** A sentinel's markdown observation (the `sentinel.output` body). */
export function sentinelReport(corpus: Corpus, r: Rng, codonId: string): string {
  if (r.chance(0.15)) return "No actionable issues detected. The agent is following the plan and the tests pass.";
  const n = r.int(1, 3);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(`## ${r.int(1, 9)}. ${r.pick(["MISSING CONTEXT", "DISCREPANCIES", "UNCLEAR INSTRUCTIONS", "SKIPPED STEPS", "TOOLING ISSUES"])}\n**Plan**: ${codonId}\n**Issue**: ${corpus.body("markdown", r.int(150, 700), r)}**Fix**: ${corpus.body("markdown", r.int(80, 300), r)}`);
  }
  // Real sentinel reports carry typographic punctuation: non-ASCII text lives in these small strings.
  return `${parts.join("\n---\n\n")}\n\nSeverity — ${r.pick(["low", "medium", "high"])} · ${r.int(1, 9)} finding(s) → plan review`;
}
