/**
 * The real-shaped profile's text blocks: prose, code and tool output drawn from Zipf-distributed
 * vocabularies (common English words, an agent's technical words, a pseudo-word tail, camelCase
 * identifiers, file paths), the way real text spreads its words. The pool templates of the
 * body-heavy profile compress 5.5–7.6:1 with zstd -3; these 2.9–4.2:1, close to
 * plan-gen-execution's assistant messages (3.2:1). Like the body-heavy text they fill per-kind
 * pools (corpus.ts) that bodies are sliced from: drawing text word by word runs at tens of MB/s,
 * too slow for 1 GB of bodies, while a slice costs a substring. The pools are large (up to 8 MiB
 * a kind) so that slices rarely repeat within a zstd window. Pure ASCII (see corpus.ts).
 */
import type { BodyKind } from "./corpus.js";
import type { Rng } from "./prng.js";

/** The commonest English words, most frequent first (the head of the prose Zipf curve). */
const COMMON = (
  "the of and to a in is that it for on with as this be are by not or from at we an can which if will " +
  "should but all has have was when so there one more also its then than what only into would each use " +
  "these other no new first they need before after now any both same just where how because still here " +
  "make does check file read line run test case time way step plan next change keep call look see set " +
  "add move fix note order value place part point issue state error data code path name type field list"
).split(" ");

/** Technical vocabulary of an agent working on a TypeScript repository (the middle of the curve). */
const TECH = (
  "journal codon sentinel checkpoint runtime buffer segment manifest reader writer cursor offset snapshot " +
  "transition budget session harness loop iteration schema payload event record index query migration " +
  "package workspace module fixture timeout retry lock heartbeat process token cost model prompt review " +
  "diff branch commit archive rig command config parser stream chunk server client handler router " +
  "middleware request response promise callback interface function method property argument parameter " +
  "import export default async await return throw catch finally const let class extends implements " +
  "monorepo turborepo bun npm tsconfig biome eslint vitest jest docs build release pipeline artifact " +
  "binary platform darwin linux windows arm64 x64 version semver changelog tag origin develop main " +
  "upstream rebase merge conflict history submodule subtree directory folder root source target output"
).split(" ");

const SYLLABLES = (
  "ka re to mi sel dor an ve li nu pra gor tem bal fi qu on ex ri sa ten mar co lu de vi ran ho zen " +
  "pel tri ma no gra cer fa is ul bo ne ar ti ko mo st ch th pl br cl tr sh"
).split(" ");

/** A Zipf sampler over `words` (rank r has weight 1 / (r + 1)^s), O(1) per draw. */
class Zipf {
  private readonly table: Uint16Array;
  constructor(readonly words: string[], s: number) {
    const n = words.length;
    const w = new Float64Array(n);
    let total = 0;
    for (let i = 0; i < n; i++) total += w[i] = 1 / (i + 1) ** s;
    const size = 1 << 16;
    this.table = new Uint16Array(size);
    let k = 0;
    let acc = 0;
    for (let i = 0; i < n && k < size; i++) {
      acc += w[i] / total;
      const end = Math.min(size, Math.round(acc * size));
      while (k < end) this.table[k++] = i;
    }
    while (k < size) this.table[k++] = n - 1;
  }
  draw(r: Rng): string {
    return this.words[this.table[Math.floor(r.next() * 65536)]];
  }
}

/** Pseudo-words (syllable strings) for the long tail of a vocabulary. */
function pseudoWords(r: Rng, n: number, minSyl: number, maxSyl: number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    let w = "";
    for (let k = r.int(minSyl, maxSyl); k > 0; k--) w += r.pick(SYLLABLES);
    out.add(w);
  }
  return [...out];
}

const cap = (w: string): string => w[0].toUpperCase() + w.slice(1);

/**
 * The block writers of the text model: a prose vocabulary (common words, technical words, then a
 * pseudo-word tail), an identifier vocabulary (camelCase pairs) and file paths, all drawn once
 * from `r`; each writer appends one block (a paragraph, a code line, an output line).
 */
export function realBlocks(r: Rng): Record<BodyKind, (rr: Rng) => string> {
  const proseVocab = new Zipf([...COMMON, ...TECH, ...pseudoWords(r, 1500, 2, 4)], 1.45);
  const techVocab = new Zipf([...TECH, ...pseudoWords(r, 600, 1, 3)], 1.1);
  const idents: string[] = [];
  for (let i = 0; i < 1500; i++) idents.push(`${techVocab.draw(r)}${cap(techVocab.draw(r))}`);
  const identVocab = new Zipf(idents, 1.05);
  const dirs = ["src", "server", "tests/unit", "tests/e2e", "packages/core/src", "packages/cli/src", "docs", "plan", "scripts", "source/hankweave/server"];
  const paths: string[] = [];
  for (let i = 0; i < 1200; i++) {
    paths.push(`${r.pick(dirs)}/${techVocab.draw(r)}-${techVocab.draw(r)}.${r.pick(["ts", "ts", "ts", "md", "json", "py", "tsx"])}`);
  }
  const pathVocab = new Zipf(paths, 1.1);
  // Tools print absolute paths under the agent's root (plan-gen: /Users/…/agentRoot/source/…).
  const abs = (rr: Rng): string => `${rr.chance(0.5) ? "/home/agent/executions/generated/agentRoot/" : ""}${pathVocab.draw(rr)}`;
  const word = (rr: Rng): string => proseVocab.draw(rr);

  const sentence = (rr: Rng): string => {
    let s = cap(word(rr));
    for (let k = rr.int(5, 22); k > 0; k--) {
      const x = rr.next();
      if (x < 0.04) s += ` \`${identVocab.draw(rr)}\``;
      else if (x < 0.055) s += ` \`${pathVocab.draw(rr)}\``;
      else if (x < 0.07) s += `, ${word(rr)}`;
      else if (x < 0.075) s += ` ${rr.int(1, 9999)}`;
      else s += ` ${word(rr)}`;
    }
    return s + (rr.chance(0.08) ? ":" : rr.chance(0.02) ? " --" : ".");
  };
  const markdown = (rr: Rng): string => {
    const t = rr.next();
    if (t < 0.1) return `${"#".repeat(rr.int(1, 3))} ${cap(word(rr))} ${word(rr)} ${word(rr)}\n\n`;
    if (t < 0.35) {
      let s = "";
      for (let i = rr.int(2, 6); i > 0; i--) s += `${rr.chance(0.3) ? `${rr.int(1, 9)}.` : "-"} ${rr.chance(0.2) ? `**${cap(word(rr))}**: ` : ""}${sentence(rr)}\n`;
      return `${s}\n`;
    }
    if (t < 0.4) return `\`\`\`ts\n${typescript(rr)}\`\`\`\n\n`;
    let s = "";
    for (let i = rr.int(1, 5); i > 0; i--) s += `${sentence(rr)} `;
    return `${s.trimEnd()}\n\n`;
  };
  const ident = (rr: Rng): string => identVocab.draw(rr);
  const typescript = (rr: Rng): string => {
    const t = rr.next();
    const ind = "  ".repeat(rr.int(0, 3));
    if (t < 0.12) return `import { ${ident(rr)}, ${ident(rr)} } from "./${techVocab.draw(rr)}-${techVocab.draw(rr)}.js";\n`;
    if (t < 0.22) return `${ind}// ${sentence(rr)}\n`;
    if (t < 0.4) return `${ind}const ${ident(rr)} = ${ident(rr)}.${ident(rr)}(${ident(rr)}, ${rr.chance(0.5) ? rr.int(0, 4096) : `"${word(rr)}"`});\n`;
    if (t < 0.5) return `${ind}if (${ident(rr)}.${ident(rr)} ${rr.pick(["===", "!==", ">", "<="])} ${rr.chance(0.5) ? "null" : rr.int(0, 100)}) {\n${ind}  return ${ident(rr)};\n${ind}}\n`;
    if (t < 0.6) return `${ind}${ident(rr)}: ${rr.pick(["string", "number", "boolean", "string[]", `${cap(ident(rr))}`, "Record<string, unknown>"])};\n`;
    if (t < 0.7) return `\nexport ${rr.chance(0.5) ? "async " : ""}function ${ident(rr)}(${ident(rr)}: ${cap(ident(rr))}): ${cap(ident(rr))} {\n`;
    if (t < 0.78) return `${ind}}\n`;
    if (t < 0.86) return `${ind}await ${ident(rr)}.${ident(rr)}({ ${ident(rr)}, ${ident(rr)}: ${rr.int(0, 999)} });\n`;
    if (t < 0.93) return `${ind}throw new Error(\`${sentence(rr)} \${${ident(rr)}}\`);\n`;
    return `${ind}for (const ${ident(rr)} of ${ident(rr)}) ${ident(rr)}.push(${ident(rr)});\n`;
  };
  const python = (rr: Rng): string => {
    const t = rr.next();
    const snake = (): string => ident(rr).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    if (t < 0.15) return `def ${snake()}(${snake()}, ${snake()}=None):\n    """${sentence(rr)}"""\n`;
    if (t < 0.5) return `    ${snake()} = ${snake()}.${snake()}(${snake()}, ${rr.int(0, 999)})\n`;
    if (t < 0.7) return `    if not ${snake()}:\n        raise ValueError("${word(rr)} ${word(rr)}")\n`;
    return `    # ${sentence(rr)}\n`;
  };
  const testlog = (rr: Rng): string => {
    const ok = rr.chance(0.9);
    const file = pathVocab.draw(rr).replace(/\.\w+$/, ".test.ts");
    let s = `${ok ? "(pass)" : "(fail)"} ${file} > ${word(rr)} ${word(rr)} ${word(rr)} ${word(rr)} [${rr.int(0, 900)}ms]\n`;
    if (!ok) s += `   expected ${rr.int(0, 999)} to equal ${rr.int(0, 999)}\n    at ${file}:${rr.int(1, 400)}:${rr.int(1, 80)}\n`;
    if (rr.chance(0.05)) s += `\n Test Files  ${rr.int(1, 90)} passed (${rr.int(1, 90)})\n      Tests  ${rr.int(10, 900)} passed\n   Duration  ${rr.int(1, 90)}.${rr.int(10, 99)}s\n\n`;
    return s;
  };
  const grep = (rr: Rng): string => `${abs(rr)}:${rr.int(1, 900)}:${typescript(rr).trimEnd()}\n`;
  const listing = (rr: Rng): string => {
    const t = rr.next();
    if (t < 0.5) return `${abs(rr)}\n`;
    if (t < 0.8) return `-rw-r--r--  1 agent  staff  ${String(rr.int(80, 90000)).padStart(6)} Mar  ${rr.int(1, 9)} ${rr.int(10, 23)}:${String(rr.int(0, 59)).padStart(2, "0")} ${abs(rr)}\n`;
    return `${rr.hex(7)} ${sentence(rr)}\n`;
  };
  return { markdown, typescript, python, testlog, grep, listing };
}
