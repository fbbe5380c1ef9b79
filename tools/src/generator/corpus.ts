/**
 * The body pool: per seed, a few megabytes of text a model and its tools would produce (markdown
 * prose, TypeScript, Python, test logs, grep output, listings), generated once and then sliced.
 * Pools are pure ASCII on purpose: one non-ASCII character makes V8 store a whole pool (and every
 * slice of it) as a two-byte string, which halves serialization speed; non-ASCII text is added in
 * small strings instead (see payloads.ts). Bodies are cut from it line-aligned, so making a body costs a substring, not fresh text: this
 * is what keeps 1 GB of generation well under a minute (JSON.stringify is the real cost).
 */
import type { Rng } from "./prng.js";

export type BodyKind = "markdown" | "typescript" | "python" | "testlog" | "grep" | "listing";
export const BODY_KINDS: readonly BodyKind[] = ["markdown", "typescript", "python", "testlog", "grep", "listing"];

const NOUNS = [
  "journal", "codon", "sentinel", "checkpoint", "runtime", "buffer", "segment", "manifest", "reader", "writer",
  "cursor", "offset", "snapshot", "transition", "budget", "session", "harness", "plan", "loop", "iteration",
  "schema", "payload", "event", "record", "index", "query", "migration", "package", "workspace", "module",
  "test", "fixture", "timeout", "retry", "lock", "heartbeat", "process", "token", "cost", "model", "prompt",
  "review", "diff", "branch", "commit", "archive", "rig", "command", "config", "parser", "stream", "chunk",
];
const VERBS = [
  "reads", "writes", "validates", "replays", "folds", "appends", "rejects", "compresses", "restores", "emits",
  "tracks", "computes", "merges", "splits", "parses", "serializes", "caches", "flushes", "retries", "reports",
  "migrates", "indexes", "checks", "updates", "loads", "resolves", "handles", "skips", "records", "verifies",
];
const ADJS = [
  "stale", "torn", "canonical", "compact", "durable", "bounded", "partial", "atomic", "deterministic", "legacy",
  "incremental", "transparent", "corrupt", "missing", "empty", "large", "nested", "unique", "ordered", "final",
];
const IDENTS = [
  "state", "result", "events", "lines", "offset", "buffer", "record", "config", "options", "entry", "codonId",
  "runId", "plan", "manifest", "reader", "writer", "sha", "bytes", "count", "index", "payload", "timestamp",
  "findings", "budget", "session", "cursor", "chunk", "line", "error", "value",
];
const TYPES = ["string", "number", "boolean", "Buffer", "JournalEvent", "RunRecord", "CodonExecution", "Finding[]", "Promise<void>"];
const FILES = [
  "src/journal/writer.ts", "src/journal/reader.ts", "src/state/reducer.ts", "src/state/engine.ts", "src/diet/plan.ts",
  "src/diet/apply.ts", "src/cas/store.ts", "src/cli/main.ts", "server/state-manager.ts", "server/event-journal.ts",
  "server/sentinels/manager.ts", "server/rig/setup.ts", "tests/unit/reducer.test.ts", "tests/e2e/replay.test.ts",
  "scripts/migrate.py", "tools/report/render.py", "docs/architecture.md", "plan/task.md", "plan/background/notes.md",
  "packages/core/src/catalog.ts", "packages/audit/src/index-db.ts", "README.md",
];

function sentence(r: Rng): string {
  const n = r.pick(NOUNS);
  const s = `The ${r.pick(ADJS)} ${n} ${r.pick(VERBS)} the ${r.pick(NOUNS)} ${r.chance(0.5) ? `before it ${r.pick(VERBS)} every ${r.pick(ADJS)} ${r.pick(NOUNS)}` : `when the ${r.pick(NOUNS)} is ${r.pick(ADJS)}`}`;
  return r.chance(0.2) ? `${s} (see \`${r.pick(FILES)}\`).` : `${s}.`;
}

function markdownBlock(r: Rng): string {
  const t = r.next();
  if (t < 0.15) return `## ${r.pick(ADJS)[0].toUpperCase()}${r.pick(ADJS).slice(1)} ${r.pick(NOUNS)} handling\n`;
  if (t < 0.35) {
    const items: string[] = [];
    for (let i = r.int(2, 6); i > 0; i--) items.push(`- ${r.chance(0.3) ? "[ ] " : ""}${sentence(r)}`);
    return `${items.join("\n")}\n`;
  }
  if (t < 0.42) return `\`\`\`ts\n${tsBlock(r)}\`\`\`\n`;
  const s: string[] = [];
  for (let i = r.int(2, 6); i > 0; i--) s.push(sentence(r));
  return `${s.join(" ")}\n`;
}

function tsBlock(r: Rng): string {
  const name = `${r.pick(VERBS).replace(/s$/, "")}${r.pick(NOUNS)[0].toUpperCase()}${r.pick(NOUNS).slice(1)}`;
  const a = r.pick(IDENTS);
  const b = r.pick(IDENTS);
  const t = r.next();
  if (t < 0.2) return `import { ${name} } from "./${r.pick(NOUNS)}-${r.pick(NOUNS)}.js";\n`;
  if (t < 0.4) {
    return `export interface ${name[0].toUpperCase()}${name.slice(1)}Options {\n  ${a}: ${r.pick(TYPES)};\n  ${b}?: ${r.pick(TYPES)};\n  /** ${sentence(r)} */\n  ${r.pick(IDENTS)}Bytes: number;\n}\n\n`;
  }
  return (
    `/** ${sentence(r)} */\nexport async function ${name}(${a}: ${r.pick(TYPES)}, ${b}: ${r.pick(TYPES)}): Promise<${r.pick(TYPES)}> {\n` +
    `  const ${r.pick(IDENTS)} = await ${r.pick(VERBS).replace(/s$/, "")}(${a}, { ${b}, limit: ${r.int(1, 4096)} });\n` +
    `  if (${a}.length > ${r.int(0, 10000)}) {\n    throw new JournalError("${r.pick(ADJS).toUpperCase()}_${r.pick(NOUNS).toUpperCase()}", \`${r.pick(NOUNS)} \${${b}} is ${r.pick(ADJS)}\`);\n  }\n` +
    `  for (const ${r.pick(IDENTS)} of ${b}) ${r.pick(IDENTS)}.push(${r.pick(IDENTS)}.${r.pick(IDENTS)});\n  return ${a};\n}\n\n`
  );
}

function pyBlock(r: Rng): string {
  const name = `${r.pick(VERBS).replace(/s$/, "")}_${r.pick(NOUNS)}`;
  if (r.chance(0.2)) return `import ${r.pick(NOUNS)}\nfrom ${r.pick(NOUNS)}.${r.pick(NOUNS)} import ${r.pick(IDENTS)}\n`;
  return (
    `def ${name}(${r.pick(IDENTS)}, ${r.pick(IDENTS)}=None):\n    """${sentence(r)}"""\n` +
    `    ${r.pick(IDENTS)} = [x for x in ${r.pick(IDENTS)} if x.${r.pick(IDENTS)} > ${r.int(0, 999)}]\n` +
    `    if not ${r.pick(IDENTS)}:\n        raise ValueError("${r.pick(ADJS)} ${r.pick(NOUNS)}")\n    return ${r.pick(IDENTS)}\n\n`
  );
}

function testLogBlock(r: Rng): string {
  const file = r.pick(FILES.filter((f) => f.includes("test")).concat(["src/journal/writer.test.ts", "src/diet/plan.test.ts"]));
  const lines: string[] = [];
  for (let i = r.int(2, 8); i > 0; i--) {
    const ok = r.chance(0.9);
    lines.push(` ${ok ? "PASS" : "FAIL"} ${file} > ${r.pick(NOUNS)} ${r.pick(VERBS)} a ${r.pick(ADJS)} ${r.pick(NOUNS)} ${r.int(1, 900)}ms`);
    if (!ok) lines.push(`   -> expected ${r.int(0, 99)} to equal ${r.int(0, 99)}\n   at ${file}:${r.int(1, 400)}:${r.int(1, 80)}`);
  }
  return `${lines.join("\n")}\n`;
}

function grepBlock(r: Rng): string {
  const lines: string[] = [];
  for (let i = r.int(1, 6); i > 0; i--) {
    lines.push(`${r.pick(FILES)}:${r.int(1, 900)}:  const ${r.pick(IDENTS)} = ${r.pick(IDENTS)}.${r.pick(IDENTS)}(${r.pick(IDENTS)});`);
  }
  return `${lines.join("\n")}\n`;
}

function listingBlock(r: Rng): string {
  const dir = r.pick(["src", "server", "tests", "plan", "packages/core/src", "docs"]);
  const lines: string[] = [];
  for (let i = r.int(2, 8); i > 0; i--) {
    lines.push(`-rw-r--r--  1 agent  staff  ${String(r.int(80, 90000)).padStart(6)} Mar  5 12:${String(r.int(0, 59)).padStart(2, "0")} ${dir}/${r.pick(NOUNS)}-${r.pick(NOUNS)}.${r.pick(["ts", "md", "py", "json"])}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The body-heavy profile's block writers (small template vocabularies: very compressible). */
export const TEMPLATE_BLOCKS: Record<BodyKind, (r: Rng) => string> = {
  markdown: markdownBlock,
  typescript: tsBlock,
  python: pyBlock,
  testlog: testLogBlock,
  grep: grepBlock,
  listing: listingBlock,
};

/** Per-kind text pools and a line-aligned slicer. */
export interface Corpus {
  /** A body of about `bytes` characters of `kind`, cut line-aligned from a random place. */
  body(kind: BodyKind, bytes: number, r: Rng): string;
  /** Characters held per kind. */
  readonly charsPerKind: number;
}

/**
 * Build the pool (deterministic for the rng). `charsPerKind` bounds memory and build time
 * (about 60 ms per MB with the templates); bodies longer than a pool are made of several slices.
 * `blocks` writes the text (default the templates; the real profile's are in text-model.ts).
 */
export function buildCorpus(r: Rng, charsPerKind: number, blocks: Record<BodyKind, (r: Rng) => string> = TEMPLATE_BLOCKS): Corpus {
  const pools = new Map<BodyKind, string>();
  for (const kind of BODY_KINDS) {
    const parts: string[] = [];
    let n = 0;
    const block = blocks[kind];
    while (n < charsPerKind) {
      const b = block(r);
      parts.push(b);
      n += b.length;
    }
    pools.set(kind, parts.join(""));
  }
  return {
    charsPerKind,
    body(kind, bytes, rr) {
      const pool = pools.get(kind) as string;
      let out = "";
      while (out.length < bytes) {
        const want = Math.min(bytes - out.length, pool.length >> 1);
        let start = Math.floor(rr.next() * (pool.length - want));
        const nl = pool.indexOf("\n", start);
        start = nl < 0 || nl + 1 + want > pool.length ? 0 : nl + 1;
        out += pool.slice(start, start + Math.max(1, want));
      }
      return out;
    },
  };
}
