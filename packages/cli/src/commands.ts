/**
 * The command registry. Each command lives in its own file under `src/commands/`; add one line
 * here to register it.
 */
import type { Command } from "./io.js";

export const COMMANDS: Command<any>[] = [
];

/** Spellings of the reference runtime accepted as aliases: `--diet-journal <exec>` → `diet <exec>`. */
export const FLAG_ALIASES: Record<string, string> = {
  "--diet-journal": "diet",
  "--restore-journal": "restore",
};
