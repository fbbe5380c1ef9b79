#!/usr/bin/env node
// Assembles README.md: the hand-written head (up to `<!-- sections -->`), then each area's
// documentation from docs/*.md with headings demoted one level, then the error-code table
// (between its markers, regenerated from ERROR_CODES by tools/src/error-table.ts).
// Usage: node tools/assemble-readme.mjs   (run after editing docs/*.md)
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const SECTIONS = ["journal", "state", "diet", "audit", "core", "bench"];
const readme = readFileSync(join(root, "README.md"), "utf8");
const head = readme.slice(0, readme.indexOf("<!-- sections -->") + "<!-- sections -->".length);
const tail = readme.slice(readme.indexOf("<!-- end-sections -->"));
const body = SECTIONS.map((name) => {
  const text = readFileSync(join(root, "docs", `${name}.md`), "utf8").trim();
  // Demote headings (outside code fences) so each doc becomes a README section.
  let fence = false;
  return text
    .split("\n")
    .map((line) => {
      if (line.startsWith("```")) fence = !fence;
      return !fence && /^#{1,5} /.test(line) ? `#${line}` : line;
    })
    .join("\n");
}).join("\n\n");
const table = execFileSync(process.execPath, ["--import", "tsx", join(root, "tools/src/error-table.ts")], { cwd: root, encoding: "utf8" });
const tailWithTable = tail.replace(/<!-- error-codes:start -->[\s\S]*<!-- error-codes:end -->/, `<!-- error-codes:start -->\n${table}<!-- error-codes:end -->`);
writeFileSync(join(root, "README.md"), `${head}\n\n${body}\n\n${tailWithTable}`);
console.log(`README.md assembled from ${SECTIONS.length} docs`);
