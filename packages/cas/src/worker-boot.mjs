// Boot script of a worker started from the TypeScript sources (see worker-start.ts): registers
// tsx's ESM loader in this worker thread, then imports the .ts entry named by the first argument.
// Plain JavaScript on purpose: it must run before any TypeScript can. The built package never
// uses it (its workers are .js files).
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

const [entry] = process.argv.splice(2, 1);
process.argv[1] = fileURLToPath(entry); // as if the entry had been started directly
register();
await import(entry);
