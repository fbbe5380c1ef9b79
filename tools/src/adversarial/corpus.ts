/**
 * The whole adversarial corpus: every family's cases with their expected exit and stable code.
 * Generated (deterministic, nothing big committed); see README.md beside this file.
 */
import * as path from "node:path";
import { COMMAND_USES, type CommandUse } from "./commands.js";
import type { AdversarialCase } from "./harness.js";
import { JOURNAL_VARIANTS } from "./journals/variants.js";
import { DIETED_VARIANTS } from "./dieted/variants.js";
import { pathCases } from "./paths/cases.js";
import { keyCases, type KeysCase } from "./keys/cases.js";
import { lockCases } from "./locks/cases.js";
import { finishedExec } from "./executions.js";

type Expect = { exit: number; code?: string };
const ok: Expect = { exit: 0 };
const fail = (code: string): Expect => ({ exit: 1, code });

/** What a healthy finished journal gives each use (diff: no state.json; restore: nothing dieted). */
function base(u: CommandUse): Expect {
  if (u.label === "diff") return fail("STATE_MISMATCH");
  if (u.label === "restore") return fail("NOTHING_TO_RESTORE");
  return ok;
}

const CORRUPT_REPORTERS = new Set(["cat", "stats", "stats-json", "repair-dry", "repair", "rebuild", "rebuild-write", "audit", "verify", "summary"]);

/** The expectation of journal variant `v` under use `u` (the rules of docs/hostile.md). */
function journalExpect(v: string, u: CommandUse): Expect {
  // restore: a plain or absent journal is NOTHING_TO_RESTORE; a directory or FIFO in its place, any stable code.
  const all = (code: string): Expect => (u.label === "restore" ? (code === "JOURNAL_NOT_FOUND" ? fail("NOTHING_TO_RESTORE") : { exit: 1 }) : fail(code));
  switch (v) {
    case "corrupt-middle": case "bom": case "nul-line": case "nul-in-line": case "non-object-line": case "string-line": case "long-corrupt-line":
      return CORRUPT_REPORTERS.has(u.label) ? fail("CORRUPT_LINE") : base(u);
    case "envelope-missing-data":
      return CORRUPT_REPORTERS.has(u.label) && !u.label.startsWith("rebuild") ? fail("CORRUPT_LINE") : base(u);
    case "invalid-utf8":
      // rebuild folds only state.transition lines: an invalid info line is not its concern.
      return CORRUPT_REPORTERS.has(u.label) && !u.label.startsWith("rebuild") ? fail("INVALID_UTF8") : base(u);
    case "torn-tail": case "truncated-half":
      if (u.label === "stats" || u.label === "stats-json" || u.label === "verify") return fail("TORN_TAIL");
      if (u.label === "diet" || u.label === "diet-dry") return fail("RUN_NOT_FINISHED");
      return base(u);
    case "empty": case "blank-lines-only":
      return u.label === "diet" || u.label === "diet-dry" ? fail("RUN_NOT_FINISHED") : base(u);
    case "no-journal": case "no-hankweave": return all("JOURNAL_NOT_FOUND");
    case "journal-is-directory": case "journal-is-fifo": return all("NOT_A_REGULAR_FILE");
    case "sidecar-lying": return u.label === "verify" ? fail("SIDECAR_MISMATCH") : base(u);
    case "sidecar-malformed": return u.label === "verify" ? fail("SIDECAR_INVALID") : base(u);
    case "state-corrupt":
      if (u.label === "verify") return fail("STATE_UNREADABLE");
      if (u.label === "diff") return fail("STATE_CORRUPT");
      return base(u);
    default: return base(u);
  }
}

/** Variants run through every command use; the others through `SUBSET_USES`. */
const FULL_VARIANTS = new Set(["ok", "corrupt-middle", "torn-tail", "invalid-utf8", "journal-is-fifo", "no-journal"]);
const SUBSET_USES = new Set(["cat", "stats", "rebuild", "audit", "verify", "index", "diet-dry"]);

function journalCases(): AdversarialCase[] {
  const out: AdversarialCase[] = [];
  for (const v of JOURNAL_VARIANTS) {
    for (const u of COMMAND_USES) {
      if (!FULL_VARIANTS.has(v.name) && !SUBSET_USES.has(u.label)) continue;
      const e = journalExpect(v.name, u);
      out.push({
        name: `journals/${v.name}/${u.label}`, family: "journals", classes: e.exit === 0 ? [0] : [7], command: u.command,
        exit: [e.exit], ...(e.code ? { code: e.code } : {}), mayChange: u.mayChange,
        setup: (root) => { const exec = v.make(root); return { exec, argv: u.argv(exec, root) }; },
      });
    }
  }
  return out;
}

const DIETED_USES = new Set(["cat", "stats", "verify", "restore", "audit", "diet", "rebuild", "index"]);

function dietedExpect(v: string, u: CommandUse): Expect {
  const codes: Record<string, string> = {
    "manifest-malformed": "MANIFEST_INVALID", "manifest-wrong-bytes": "MANIFEST_INVALID", "manifest-huge-bytes": "MANIFEST_INVALID",
    "zst-truncated": "ZSTD_CORRUPT", "zst-garbage": "ZSTD_CORRUPT", "zst-empty": "ZSTD_CORRUPT", "zst-bomb-claim": "ZSTD_CORRUPT",
    "half-pair-zst-only": "HALF_PAIR", "half-pair-manifest-only": "HALF_PAIR",
    "ref-dotdot": "CAS_BAD_REF", "ref-wrong-sha": "CAS_MISSING", "ref-huge-bytes": "CAS_CORRUPT", "ref-not-cas": "MANIFEST_MISMATCH",
  };
  // Blob faults: every reader of bodies fails; rebuild folds only state.transition lines (no body).
  const blob: Record<string, string> = { "cas-missing": "CAS_MISSING", "cas-wrong-content": "CAS_CORRUPT", "cas-garbage": "CAS_CORRUPT", "cas-bomb-claim": "ZSTD_TOO_LARGE" };
  if (v === "ok") return ok;
  if (v === "manifest-wrong-sha") return u.label === "diet" || u.label === "restore" ? fail("MANIFEST_MISMATCH") : u.label === "verify" ? fail("RESTORE_MISMATCH") : ok;
  if (blob[v]) return u.label === "rebuild" ? ok : fail(blob[v]);
  return fail(codes[v]);
}

function dietedCases(): AdversarialCase[] {
  const out: AdversarialCase[] = [];
  for (const v of DIETED_VARIANTS) {
    for (const u of COMMAND_USES) {
      if (!DIETED_USES.has(u.label)) continue;
      const e = dietedExpect(v.name, u);
      out.push({
        name: `dieted/${v.name}/${u.label}`, family: "dieted", classes: e.exit === 0 ? [0] : [7], command: u.command,
        exit: [e.exit], ...(e.code ? { code: e.code } : {}), mayChange: u.mayChange,
        setup: async (root) => { const exec = await v.make(root, path.join(root, "template")); return { exec, argv: u.argv(exec, root) }; },
      });
    }
  }
  return out;
}

/** A bad flag for every command: exit 2 with USAGE, nothing touched. */
function usageCases(): AdversarialCase[] {
  const names = [...new Set(COMMAND_USES.map((u) => u.command))];
  const out: AdversarialCase[] = names.map((cmd) => ({
    name: `usage/bogus-flag/${cmd}`, family: "usage", classes: [7], command: cmd, exit: [2], code: "USAGE",
    setup: (root: string) => { const exec = finishedExec(root); return { exec, argv: [cmd, exec, "--no-such-flag"] }; },
  }));
  out.push({ name: "usage/bare/none", family: "usage", classes: [7], command: "(none)", exit: [2], code: "USAGE", setup: (root) => ({ exec: finishedExec(root), argv: [] }) });
  out.push({ name: "usage/unknown-command/none", family: "usage", classes: [7], command: "(none)", exit: [2], code: "USAGE", setup: (root) => ({ exec: finishedExec(root), argv: ["frobnicate"] }) });
  out.push({ name: "usage/endless-cte/query", family: "usage", classes: [4], command: "query", exit: [1], code: "QUERY_TOO_LARGE", mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/],
    setup: (root) => { const exec = finishedExec(root); return { exec, argv: ["query", exec, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c", "--max-rows", "2000"] }; } });
  out.push({ name: "usage/write-sql/query", family: "usage", classes: [4], command: "query", exit: [1], code: "QUERY_INVALID", mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/],
    setup: (root) => { const exec = finishedExec(root); return { exec, argv: ["query", exec, "DELETE FROM events"] }; } });
  return out;
}

/** Every case of the corpus. */
export function corpusCases(): (AdversarialCase | KeysCase)[] {
  return [...journalCases(), ...dietedCases(), ...pathCases(), ...keyCases(), ...lockCases(), ...usageCases()];
}
