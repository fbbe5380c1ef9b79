/**
 * Test driver for worker-start: starts the echo worker through `startWorker`, sends one message and
 * prints the answer (and how the worker was started) as one JSON line on stdout.
 */
import { startWorker, workerEntryOf } from "../worker-start.js";

const entry = new URL("./echo-worker.js", import.meta.url);
const worker = startWorker(entry, { workerData: { hello: "world" }, argv: ["--flag"] });
worker.once("message", (answer: unknown) => {
  process.stdout.write(JSON.stringify({ viaTsx: workerEntryOf(entry).source !== undefined, answer }) + "\n");
  void worker.terminate();
});
worker.once("error", (e) => {
  process.stderr.write(`worker failed: ${e.message}\n`);
  process.exitCode = 1;
});
worker.postMessage({ n: 21 });
