/**
 * The agent's side of a running codon: one assistant message (usage, actions, cost and count
 * transitions, tool results) and the `file.updated` bodies its writes produce.
 */
import {
  drawBlock, drawSessionUsage, drawUsage, fileTree, fileUpdated, prose, toolResult, toolUseId,
} from "./payloads.js";
import { iso, type Codon, type Sim, type SimStep } from "./sim.js";
import type { SizeDraw } from "./profile.js";
import type { Rng } from "./prng.js";

/** A size from the profile's log-normal draw, capped at `cap` too. */
const draw = (r: Rng, d: SizeDraw, cap: number): number => r.logNormal(d.median, d.sigma, d.min, Math.min(cap, d.max));
import type { TokenUsage } from "@hankweave-journal/core";

/** One file body in a `file.updated`, followed (p = 0.77) by a byte-identical repeat of a recent body. */
export function* emitFile(sim: Sim, path: string, content: string, action: "created" | "modified"): Generator<SimStep> {
  const ev = sim.event("file.updated", fileUpdated(sim.o.schema, path, content, action), 10);
  yield ev;
  sim.lastBody = { path, content, at: ev.at };
  sim.touched.push(path);
  if (sim.touched.length > 64) sim.touched.shift();
  const f = { path, content };
  sim.repo.recent.push(f);
  if (sim.repo.recent.length > 64) sim.repo.recent.shift();
  // 0.77 repeats per new body → 0.77/1.77 = 43.5% of bodies are repeats.
  if (sim.r.chance(sim.p.bodyRepeat)) {
    const again = sim.repo.repeatCandidate();
    if (again) yield sim.event("file.updated", fileUpdated(sim.o.schema, again.path, again.content, "modified"), 50);
  }
}

/** One assistant message: 1–2 content blocks, their usage and cost transitions, then tool results. */
export function* message(sim: Sim, c: Codon): Generator<SimStep> {
  const r = sim.r;
  const p = sim.p;
  const { codonId } = c.spec;
  c.messages += 1;
  const blocks = r.chance(0.45) ? 2 : 1;
  const results: (() => Generator<SimStep>)[] = [];
  const usages: { tokens: TokenUsage; cost: number }[] = [];
  sim.tick(500, 2500);
  for (let b = 0; b < blocks; b++) {
    const u = p.usage === "session"
      ? drawSessionUsage(r, c.spec.modelId, (c.session ??= { context: r.int(11_000, 26_000) }), usages[0]?.tokens ?? null)
      : drawUsage(r, c.spec.modelId);
    usages.push(u);
    yield sim.event("token.usage", { codonId, ...u.tokens, totalCost: u.cost, modelId: c.spec.modelId }, 1);
    const kind = drawBlock(r, p.blockMix);
    if (kind === "message") {
      yield sim.event("assistant.action", { codonId, action: "message", content: prose(sim.corpus, r, draw(r, p.messageChars, Infinity)) }, 1);
      continue;
    }
    const id = toolUseId(r);
    const cap = sim.bodyCap();
    let input: Record<string, unknown>;
    switch (kind) {
      case "Read": {
        const f = sim.repo.pick(cap);
        input = { file_path: `${sim.root}/agentRoot/${f.path}` };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Read", f.content, p.readLimit, r.int(0, 40)), 40);
        });
        break;
      }
      case "Bash": {
        const k = r.pick(["testlog", "grep", "listing"] as const);
        const out = sim.corpus.body(k, draw(r, p.bashOut, cap), r);
        input = { command: k === "testlog" ? "npx vitest run" : k === "grep" ? `grep -rn "${r.pick(["journal", "state", "codon"])}" src` : "ls -la src", description: "Run a command" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Bash", out, p.bashLimit, r.int(5, 60000), k === "testlog" && r.chance(0.2)), 800);
        });
        break;
      }
      case "Edit": {
        const f = sim.repo.pick(cap);
        const { oldString, newString } = sim.repo.edit(f, cap);
        input = { file_path: `${sim.root}/agentRoot/${f.path}`, old_string: oldString, new_string: newString };
        const content = f.content;
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Edit", `The file ${sim.root}/agentRoot/${f.path} has been updated.`, p.readLimit, r.int(1, 30)), 60);
          if (r.chance(p.fileUpdatedAfterEdit)) yield* emitFile(sim, f.path, content, "modified");
          if (r.chance(p.fileTreeAfterEdit)) yield sim.event("filetree.updated", fileTree(sim.touched, iso(sim.now)), 10);
        });
        break;
      }
      case "Write": {
        const f = sim.repo.create(cap, p.writeSize);
        input = { file_path: `${sim.root}/agentRoot/${f.path}`, content: f.content };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "Write", `File created successfully at: ${sim.root}/agentRoot/${f.path}`, p.readLimit, r.int(1, 30)), 60);
          if (r.chance(p.fileUpdatedAfterWrite)) yield* emitFile(sim, f.path, f.content, "created");
          // (no draw when certain: the body-heavy profile keeps its bytes)
          if (p.fileTreeAfterWrite >= 1 || r.chance(p.fileTreeAfterWrite)) yield sim.event("filetree.updated", fileTree(sim.touched, iso(sim.now)), 10);
        });
        break;
      }
      case "TodoWrite": {
        const todos = [];
        for (let t = r.int(2, 8); t > 0; t--) {
          todos.push({ content: prose(sim.corpus, r, r.int(30, 120)).replace(/\n/g, " "), status: r.pick(["pending", "in_progress", "completed"]), activeForm: "Working" });
        }
        input = { todos };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "TodoWrite", "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.", p.readLimit, 1), 20);
        });
        break;
      }
      case "Grep":
      case "Glob": {
        const out = sim.corpus.body(kind === "Grep" ? "grep" : "listing", draw(r, p.searchOut, cap), r);
        input = kind === "Grep" ? { pattern: r.pick(["codonId", "append\\(", "TODO"]), path: "src", output_mode: "content" } : { pattern: "**/*.ts" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, kind, out, p.bashLimit, r.int(5, 900)), 100);
        });
        break;
      }
      default: {
        const out = prose(sim.corpus, r, draw(r, p.fetchOut, cap));
        input = { url: `https://docs.example.com/${r.base36(6)}`, prompt: "Summarize the relevant section" };
        results.push(function* () {
          yield sim.event("tool.result", toolResult(codonId, id, "WebFetch", out, p.bashLimit, r.int(300, 9000)), 2000);
        });
      }
    }
    yield sim.event("assistant.action", { codonId, action: "tool_use", content: "", toolName: kind, toolInput: input }, 1);
  }
  for (const u of usages) {
    for (const k of ["inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens"] as const) c.tokens[k] += u.tokens[k];
    c.cost += u.cost;
    yield sim.transition("CostsIncremented", { runId: c.runId, codonId, costDelta: u.cost, tokensDelta: { ...u.tokens } }, 1);
    // The runtime counts once per usage-bearing block: two blocks of one message repeat the count.
    yield sim.transition("AssistantMessageCountUpdated", { runId: c.runId, codonId, newCount: c.messages }, 1);
  }
  for (const res of results) yield* res();
}
