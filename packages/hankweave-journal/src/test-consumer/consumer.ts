// A program a tool builder writes against the installed package (the pack test compiles it with
// `tsc --strict` in a fresh project and runs it with plain node): read, tail, fold, typed events.
import { openReader, foldJournal, knownEvent, isJournalError, ERROR_CODES, type HankweaveState, type KnownEvent } from "hankweave-journal";
// @ts-expect-error internal helpers are not part of the public API
import type { fsyncDir } from "hankweave-journal";
import { runCli, memoryIO } from "hankweave-journal/cli";

const exec = process.argv[2]!;
const reader = await openReader(exec);
let events = 0;
let tokenCost = 0;
const types = new Set<KnownEvent["type"]>();
for await (const rec of reader.events()) {
  events++;
  const e = knownEvent(rec.event);
  if (e === null) continue;
  types.add(e.type);
  if (e.type === "token.usage") {
    tokenCost += e.data.totalCost; // data typed by type: totalCost is a number
    // @ts-expect-error token.usage's modelId is a string (or absent), not a number
    const wrong: number = e.data.modelId;
    void wrong;
  }
}
const tail = await reader.tail(3);
const { state, findings } = await foldJournal(reader);
await reader.close();
const s: HankweaveState = state;
let code = "";
try {
  await openReader(`${exec}/no-such-exec`);
} catch (err) {
  if (isJournalError(err)) code = err.code;
}
const io = memoryIO();
const exit = await runCli(["stats", exec, "--json"], io);
const lib = await import("hankweave-journal");
console.log(JSON.stringify({
  events, tailLines: tail.map((r) => r.line), runs: s.runs.length, findings: findings.length, tokenCost: tokenCost > 0,
  types: types.size, code, codeKnown: code in ERROR_CODES, cliExit: exit, cliEvents: JSON.parse(io.out()).events ?? null,
  internalsExported: ["fsyncDir", "ioError"].filter((k) => k in lib),
}));
