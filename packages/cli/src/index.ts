export { runCli, main, processIO, USAGE_TEXT } from "./main.js";
export { COMMANDS, FLAG_ALIASES } from "./commands.js";
export { memoryIO } from "./io.js";
export type { CliIO, Command } from "./io.js";
export { parseCommandArgs, intFlag, filterFlags, FILTER_OPTIONS } from "./args.js";
export type { FilterFlags } from "./args.js";
