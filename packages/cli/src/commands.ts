/**
 * The command registry. Each command lives in its own file under `src/commands/`; add one line
 * here to register it.
 */
import type { Command } from "./io.js";
import { rebuildCommand } from "./commands/rebuild.js";
import { stateCommand } from "./commands/state.js";
import { diffCommand } from "./commands/diff.js";
import { catCommand } from "./commands/cat.js";
import { statsCommand } from "./commands/stats.js";
import { repairCommand } from "./commands/repair.js";
import { auditCommand } from "./commands/audit.js";
import { indexCommand } from "./commands/index.js";
import { queryCommand } from "./commands/query.js";
import { reportCommand } from "./commands/report.js";
import { verifyCommand } from "./commands/verify.js";
import { dietCommand } from "./commands/diet.js";
import { restoreCommand } from "./commands/restore.js";
import { summaryCommand } from "./commands/summary.js";
import { blameCommand } from "./commands/blame.js";
import { exportCommand } from "./commands/export.js";
import { fleetCommand } from "./commands/fleet.js";

export const COMMANDS: Command<any>[] = [
  rebuildCommand, stateCommand, diffCommand,
  catCommand,
  statsCommand,
  repairCommand,
  auditCommand, indexCommand, queryCommand, reportCommand, verifyCommand,
  dietCommand, restoreCommand,
  summaryCommand, blameCommand, exportCommand,
  fleetCommand,
];

/** Spellings of the reference runtime accepted as aliases: `--diet-journal <exec>` → `diet <exec>`. */
export const FLAG_ALIASES: Record<string, string> = {
  "--diet-journal": "diet",
  "--restore-journal": "restore",
};
