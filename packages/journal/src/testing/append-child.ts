/**
 * Child process of the crash-safety test: opens a writer on argv[2] with durability argv[3],
 * prints "ready", then appends ~1 KB events in random bursts forever, printing each acknowledged
 * event id on stdout (a pipe: synchronous writes on Linux, so an id printed is an id acknowledged).
 * The parent SIGKILLs it at a random moment.
 */
import { writeSync } from "node:fs";
import { openJournalWriter, type Durability } from "../index.js";

const [exec, durability, maxEventsText] = process.argv.slice(2);
const maxEvents = Number(maxEventsText ?? "100000");
const body = "k".repeat(900);
const writer = await openJournalWriter(exec, { durability: durability as Durability });
writeSync(1, "ready\n");
let n = 0;
while (n < maxEvents) {
  // Mostly small bursts, sometimes multi-MB ones: a SIGKILL during a large write(2) can tear it.
  const burst = Math.random() < 0.4 ? 2000 + Math.floor(Math.random() * 8000) : 1 + Math.floor(Math.random() * 64);
  await Promise.all(
    Array.from({ length: burst }, (_, i) =>
      writer.append({ type: "info", data: { seq: n + i, pid: process.pid, body } }).then((a) => {
        writeSync(1, a.event.id + "\n");
      }),
    ),
  );
  n += burst;
}
await writer.close();
writeSync(1, "done\n");
