/**
 * Every CLI command as the corpus runs it against an execution: its argv and the paths (relative
 * to the case root) it is documented to change. Everything else must stay byte-identical.
 */
import * as path from "node:path";

/** One way of running a command in the corpus. */
export interface CommandUse {
  /** Short label used in case names (`diet-dry`, `rebuild-write`, …). */
  label: string;
  /** The command name (first argv word). */
  command: string;
  argv(exec: string, root: string): string[];
  mayChange: RegExp[];
}

const EV = String.raw`exec/\.hankweave/events`;
const HW = String.raw`exec/\.hankweave`;
const LOCK = new RegExp(String.raw`^${HW}/runtime\.lock`);

/** The command uses every journal variant is run through. */
export const COMMAND_USES: CommandUse[] = [
  { label: "cat", command: "cat", argv: (e) => ["cat", e], mayChange: [] },
  { label: "stats", command: "stats", argv: (e) => ["stats", e], mayChange: [] },
  { label: "stats-json", command: "stats", argv: (e) => ["stats", e, "--json"], mayChange: [] },
  { label: "repair-dry", command: "repair", argv: (e) => ["repair", e, "--dry-run"], mayChange: [] },
  {
    label: "repair", command: "repair", argv: (e) => ["repair", e],
    mayChange: [new RegExp(`^${EV}/events\\.jsonl$`), new RegExp(`^${EV}/events\\.jsonl\\.torn-`), new RegExp(`^${EV}/events\\.meta\\.json`), LOCK],
  },
  { label: "rebuild", command: "rebuild", argv: (e) => ["rebuild", e], mayChange: [] },
  { label: "rebuild-write", command: "rebuild", argv: (e) => ["rebuild", e, "--write"], mayChange: [new RegExp(`^${HW}/state\\.json`), LOCK] },
  { label: "state", command: "state", argv: (e) => ["state", e], mayChange: [] },
  { label: "diff", command: "diff", argv: (e) => ["diff", e], mayChange: [] },
  { label: "diet-dry", command: "diet", argv: (e) => ["diet", e, "--dry-run"], mayChange: [] },
  { label: "diet", command: "diet", argv: (e) => ["diet", e], mayChange: [new RegExp(`^${EV}(/|$)`), LOCK] },
  { label: "restore", command: "restore", argv: (e) => ["restore", e], mayChange: [new RegExp(`^${EV}/events\\.jsonl`)] },
  { label: "audit", command: "audit", argv: (e) => ["audit", e], mayChange: [] },
  { label: "index", command: "index", argv: (e) => ["index", e], mayChange: [new RegExp(`^${HW}/journal\\.index\\.sqlite`)] },
  { label: "query", command: "query", argv: (e) => ["query", e, "SELECT type, count(*) AS n FROM events GROUP BY type"], mayChange: [new RegExp(`^${HW}/journal\\.index\\.sqlite`)] },
  { label: "verify", command: "verify", argv: (e) => ["verify", e, "--deep"], mayChange: [] },
  { label: "report", command: "report", argv: (e, r) => ["report", e, "-o", path.join(r, "outside", "report.html")], mayChange: [/^outside\/report\.html$/] },
  { label: "summary", command: "summary", argv: (e) => ["summary", e], mayChange: [] },
  { label: "blame", command: "blame", argv: (e) => ["blame", e, "currentRunId"], mayChange: [] },
  { label: "export", command: "export", argv: (e, r) => ["export", e, "--format", "trace", "-o", path.join(r, "outside", "trace.json")], mayChange: [/^outside\/trace\.json$/] },
];
