/** Test worker for worker-start: answers each message with its workerData, argv and a computed value. */
import { parentPort, workerData } from "node:worker_threads";
import { describeRun } from "./echo-dep.js";

parentPort!.on("message", (m: { n: number }) => {
  parentPort!.postMessage({ workerData, argv: process.argv.slice(1), ...describeRun(m) });
});
