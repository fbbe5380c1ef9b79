/**
 * `hankweave-journal restore <exec>` (also `--restore-journal <exec>`): rebuild events.jsonl from
 * the dieted pair, verified, published with link() (never overwrites); the pair and CAS are kept.
 */
import { restoreJournal } from "@hankweave-journal/diet";
import { parseCommandArgs } from "../args.js";
import type { Command } from "../io.js";

export interface RestoreArgs {
  exec: string;
  json: boolean;
}

export const restoreCommand: Command<RestoreArgs> = {
  name: "restore",
  summary: "rebuild events.jsonl from a dieted journal, byte for byte (verified, never overwrites)",
  help: `usage: hankweave-journal restore <exec> [--json]
       hankweave-journal --restore-journal <exec>   (the reference runtime's spelling)

Rebuilds events/events.jsonl from events.jsonl.zst, journal.meta.json and the CAS, streaming,
verifying every body's SHA-256 and the whole file's size and SHA-256 against the manifest before
publishing it with a hard link. An existing events.jsonl with the manifest's SHA-256 is a no-op
success; one that differs is never overwritten (RESTORE_CONFLICT). The dieted pair and the CAS
are kept.

  --json   print one JSON object {ok, result}

Exit codes: 0 restored or already restored, 1 refused or failed (nothing published), 2 usage.`,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, { json: { type: "boolean" } }, { min: 1, max: 1 });
    return { exec: p.positionals[0], json: p.values.json === true };
  },
  async run(args, io) {
    if (io.stderrIsTTY) io.stderr(`restoring ${args.exec} …\n`);
    const result = await restoreJournal(args.exec);
    if (args.json) {
      await io.stdout(JSON.stringify({ ok: true, result }) + "\n");
    } else {
      await io.stdout(`${result.status} ${result.exec}: ${result.originalBytes} bytes, sha256 ${result.originalSha256} (verified)\n`);
    }
    return 0;
  },
};
