import { defineReaderContract } from "@hankweave-journal/journal/testing";
import { openDietedReader } from "./dieted-reader.js";
import { dietBytes, rmExec } from "./test-helpers.js";

// The shared contract suite (the plain reader runs the same one): identical lines, offsets,
// bytes, events, findings, getLine, tail, page and info over a dieted journal.
defineReaderContract("dieted events.jsonl.zst (compatible, 2 MiB frames)", async (bytes) => {
  const exec = await dietBytes(bytes);
  return { reader: await openDietedReader(exec), cleanup: async () => rmExec(exec) };
}, { randomJournals: 4 });

// The extended diet (dietVersion 2) runs the same suite in ext/ext-reader.contract.int.test.ts.
