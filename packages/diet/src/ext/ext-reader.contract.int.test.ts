import { defineReaderContract } from "@hankweave-journal/journal/testing";
import { openReader } from "../open-reader.js";
import { applyExtDiet } from "./ext-diet.js";
import { rmExec, tempExec } from "../test-helpers.js";

// The shared reader contract suite over the extended diet, through openReader (the dispatch
// every tool uses): tiny blocks and pack frames so that lines, text values and pieces cross them.
defineReaderContract("extended diet (columnar container, 300-byte blocks, 200-byte pack frames)", async (bytes) => {
  const exec = tempExec(bytes);
  await applyExtDiet(exec, { force: true, blockTargetBytes: 300, packFrameTargetBytes: 200, workers: 0 });
  return { reader: await openReader(exec), cleanup: async () => rmExec(exec) };
}, { randomJournals: 3 });
