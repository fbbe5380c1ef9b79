import { rm } from "node:fs/promises";
import { defineReaderContract, makeExecWithJournal } from "./testing/index.js";
import { openPlainReader } from "./plain-reader.js";

defineReaderContract("plain events.jsonl", async (bytes) => {
  const exec = makeExecWithJournal(bytes);
  return { reader: await openPlainReader(exec), cleanup: () => rm(exec, { recursive: true, force: true }) };
}, { randomJournals: 8 });
