/**
 * `hankweave-journal/cli`: run the command-line tool inside another program (tests, wrappers).
 * `runCli(argv, io)` returns the exit code and never prints outside `io`.
 *
 * @example const io = memoryIO(); const code = await runCli(["stats", "/runs/x", "--json"], io); JSON.parse(io.out())
 */
export { runCli, main, processIO, memoryIO, COMMANDS } from "@hankweave-journal/cli";
export type { CliIO, Command } from "@hankweave-journal/cli";
