// The README's library example, verbatim (tools/src/readme.test.ts checks it stays so); type-checked
// with the repo and compiled by the pack test against the installed package.
import { openReader, foldJournal, knownEvent, isJournalError } from "hankweave-journal";

const reader = await openReader("/runs/x");           // plain or dieted, the same API
let tokens = 0;
for await (const { line, event } of reader.events({ types: ["token.usage", "codon.completed"] })) {
  const e = knownEvent(event);                          // data typed by type, or null
  if (e?.type === "token.usage") tokens += e.data.inputTokens + e.data.outputTokens;
  if (e?.type === "codon.completed" && !e.data.success) console.log(`line ${line}: ${e.data.codonId} failed`);
}
const last = await reader.tail(5);                      // the last 5 events
const { state, findings } = await foldJournal(reader);  // the fold, with findings and line numbers
await reader.close();
void last; void state; void findings; void isJournalError; void tokens;
