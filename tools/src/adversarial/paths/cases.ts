/**
 * Output paths and symlinks (family `paths`, issue 14 classes 1 and 2): `report -o` and
 * `export -o` aimed at a journal, a state file, a dieted journal, another execution, through
 * symlinks, at devices, FIFOs and directories; writes through symlinked journal files.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { layoutOf } from "@hankweave-journal/core";
import type { AdversarialCase } from "../harness.js";
import { dietedExec, execWithJournal, finishedExec, finishedLines, joinLines } from "../executions.js";

type Target = { name: string; code?: string; exit: number; make(root: string, exec: string): string | Promise<string>; dieted?: boolean };

const TARGETS: Target[] = [
  { name: "journal", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (_r, e) => layoutOf(e).journal },
  { name: "state-json", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (_r, e) => { fs.writeFileSync(layoutOf(e).state, "{}"); return layoutOf(e).state; } },
  { name: "sidecar", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (_r, e) => layoutOf(e).sidecar },
  { name: "new-file-in-hankweave", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (_r, e) => path.join(layoutOf(e).hankweave, "report.html") },
  { name: "dieted-journal", code: "OUTPUT_IN_EXECUTION", exit: 1, dieted: true, make: (_r, e) => layoutOf(e).dietedJournal },
  { name: "manifest", code: "OUTPUT_IN_EXECUTION", exit: 1, dieted: true, make: (_r, e) => layoutOf(e).manifest },
  { name: "other-execution-journal", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (r) => layoutOf(finishedExec(r, "other")).journal },
  { name: "relative-into-hankweave", code: "OUTPUT_IN_EXECUTION", exit: 1, make: () => "exec/.hankweave/events/events.jsonl" },
  { name: "symlink-to-journal", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (r, e) => { const l = path.join(r, "outside", "innocent.html"); fs.symlinkSync(layoutOf(e).journal, l); return l; } },
  { name: "dangling-symlink-into-hankweave", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (r, e) => { const l = path.join(r, "outside", "dangling.html"); fs.symlinkSync(path.join(layoutOf(e).hankweave, "x.html"), l); return l; } },
  { name: "symlinked-dir-into-hankweave", code: "OUTPUT_IN_EXECUTION", exit: 1, make: (r, e) => { const l = path.join(r, "outside", "hw"); fs.symlinkSync(layoutOf(e).hankweave, l); return path.join(l, "state.json"); } },
  { name: "dev-null", code: "NOT_A_REGULAR_FILE", exit: 1, make: () => "/dev/null" },
  { name: "fifo", code: "NOT_A_REGULAR_FILE", exit: 1, make: (r) => { const f = path.join(r, "outside", "fifo"); execFileSync("mkfifo", [f]); return f; } },
  { name: "directory", code: "NOT_A_REGULAR_FILE", exit: 1, make: (r) => path.join(r, "outside") },
  { name: "missing-directory", code: "IO_ERROR", exit: 1, make: (r) => path.join(r, "outside", "nope", "r.html") },
];

function outputCases(): AdversarialCase[] {
  const out: AdversarialCase[] = [];
  for (const cmd of ["report", "export"] as const) {
    for (const t of TARGETS) {
      out.push({
        name: `paths/output-${t.name}/${cmd}`, family: "paths", classes: [1], command: cmd, exit: [t.exit], code: t.code,
        async setup(root) {
          const exec = t.dieted ? await dietedExec(root, path.join(root, "template")) : finishedExec(root);
          const target = await t.make(root, exec);
          return { exec, argv: cmd === "report" ? ["report", exec, "-o", target] : ["export", exec, "--format", "trace", "-o", target] };
        },
      });
    }
  }
  // A regular file outside every .hankweave/ is written (and only it).
  out.push({
    name: "paths/output-regular-file/report", family: "paths", classes: [1], command: "report", exit: [0], mayChange: [/^outside\/ok\.html$/],
    setup: (root) => { const exec = finishedExec(root); return { exec, argv: ["report", exec, "-o", path.join(root, "outside", "ok.html")] }; },
  });
  out.push({
    name: "paths/output-symlink-to-regular/report", family: "paths", classes: [1], command: "report", exit: [0], mayChange: [/^outside\/target\.html$/],
    setup: (root) => {
      const exec = finishedExec(root);
      fs.writeFileSync(path.join(root, "outside", "target.html"), "old");
      fs.symlinkSync(path.join(root, "outside", "target.html"), path.join(root, "outside", "link.html"));
      return { exec, argv: ["report", exec, "-o", path.join(root, "outside", "link.html")] };
    },
  });
  return out;
}

/** A torn journal whose events.jsonl is a symlink to a file outside the execution. */
function tornOutside(root: string): string {
  const exec = execWithJournal(root, "");
  const outsideJournal = path.join(root, "outside", "journal.jsonl");
  const b = joinLines(finishedLines());
  fs.writeFileSync(outsideJournal, b.subarray(0, b.length - 30));
  fs.rmSync(layoutOf(exec).journal);
  fs.symlinkSync(outsideJournal, layoutOf(exec).journal);
  return exec;
}

function symlinkCases(): AdversarialCase[] {
  const link = (root: string, inside: string): void => {
    const target = path.join(root, "outside", `${path.basename(inside)}.target`);
    fs.writeFileSync(target, "outside: must not change\n");
    fs.rmSync(inside, { force: true });
    fs.symlinkSync(target, inside);
  };
  return [
    { name: "paths/symlinked-journal-torn/repair", family: "paths", classes: [2], command: "repair", exit: [1], code: "SYMLINK_REFUSED",
      setup: (root) => { const exec = tornOutside(root); return { exec, argv: ["repair", exec] }; } },
    { name: "paths/symlinked-journal-torn/repair-dry", family: "paths", classes: [2], command: "repair", exit: [0, 1],
      setup: (root) => { const exec = tornOutside(root); return { exec, argv: ["repair", exec, "--dry-run"] }; } },
    { name: "paths/symlinked-state-bak/rebuild-write", family: "paths", classes: [2], command: "rebuild", exit: [0, 1],
      mayChange: [/^exec\/\.hankweave\/state\.json$/, /^exec\/\.hankweave\/runtime\.lock/, /^exec\/\.hankweave\/state\.json\.bak$/],
      setup: (root) => { const exec = finishedExec(root); fs.writeFileSync(layoutOf(exec).state, "{}"); link(root, layoutOf(exec).stateBak); return { exec, argv: ["rebuild", exec, "--write"] }; } },
    { name: "paths/symlinked-state-tmp/rebuild-write", family: "paths", classes: [2], command: "rebuild", exit: [0, 1],
      mayChange: [/^exec\/\.hankweave\/state\.json(\.bak)?$/, /^exec\/\.hankweave\/runtime\.lock/, /^exec\/\.hankweave\/state\.json\.tmp$/],
      setup: (root) => { const exec = finishedExec(root); link(root, layoutOf(exec).stateTmp); return { exec, argv: ["rebuild", exec, "--write"] }; } },
    { name: "paths/symlinked-sidecar/repair", family: "paths", classes: [2], command: "repair", exit: [0, 1],
      mayChange: [/^exec\/\.hankweave\/events\/events\.meta\.json/, /^exec\/\.hankweave\/runtime\.lock/],
      setup: (root) => { const exec = finishedExec(root); link(root, layoutOf(exec).sidecar); return { exec, argv: ["repair", exec] }; } },
    { name: "paths/symlinked-index/index", family: "paths", classes: [2], command: "index", exit: [0, 1],
      mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/],
      setup: (root) => { const exec = finishedExec(root); link(root, layoutOf(exec).index); return { exec, argv: ["index", exec] }; } },
  ];
}

export function pathCases(): AdversarialCase[] {
  return [...outputCases(), ...symlinkCases()];
}
