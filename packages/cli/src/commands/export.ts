/**
 * `export <exec> --format trace [-o FILE]`: the execution as a Chrome Trace Event Format JSON
 * (Perfetto UI, chrome://tracing).
 */
import path from "node:path";
import { JournalError } from "@hankweave-journal/core";
import { exportTrace, traceJsonChunks } from "@hankweave-journal/audit";
import { checkOutputPath, createTemp, ioError, publishTemp, removeQuietly } from "@hankweave-journal/journal";
import { parseCommandArgs } from "../args.js";
import type { CliIO, Command } from "../io.js";

export interface ExportArgs {
  exec: string;
  format: "trace";
  out: string;
  json: boolean;
}

const HELP = `usage: hankweave-journal export <exec> --format trace [-o FILE] [--json]

Writes the execution as a Chrome Trace Event Format JSON file, which Perfetto UI
(https://ui.perfetto.dev, "Open trace file") and chrome://tracing open: each run is a process,
each codon attempt a slice named with its outcome (reason in its args), tool calls nested inside
their attempt (assistant.action tool_use → tool.result), errors as instants, sentinel outputs on a
"sentinels" thread, and counter tracks "cost ($)" and "tokens" per run. Every event's args carry
its journal line (args.line, from 0). One streaming pass; plain or dieted journals; read-only.

  --format trace   the output format (required; trace is the only one)
  -o, --out FILE   where to write (default, or "-": stdout); never inside an execution's
                   .hankweave/ directory, never onto a device or FIFO
  --json           with -o FILE: print {path, bytes, events, runs, attempts} instead of a line

Examples:
  hankweave-journal export ./my-exec --format trace -o my-exec.trace.json --json
  hankweave-journal export ./my-exec --format trace | gzip > my-exec.trace.json.gz

Exit codes: 0 written, 1 failure (EXPORT_FORMAT_UNKNOWN, OUTPUT_IN_EXECUTION, NOT_A_REGULAR_FILE, no journal), 2 usage.`;

export const exportCommand: Command<ExportArgs> = {
  name: "export",
  summary: "export the execution as a Chrome trace (Perfetto, chrome://tracing)",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      format: { type: "string" }, out: { type: "string", short: "o" }, json: { type: "boolean" },
    }, { min: 1, max: 1 });
    if (p.values.format === undefined) throw new JournalError("USAGE", "export needs --format trace");
    if (p.values.format !== "trace") {
      throw new JournalError("EXPORT_FORMAT_UNKNOWN", `export cannot write format ${JSON.stringify(p.values.format)}`, { actual: String(p.values.format), expected: "trace" }, { hint: "use --format trace" });
    }
    const out = typeof p.values.out === "string" ? p.values.out : "-";
    if (out === "-" && p.values.json) throw new JournalError("USAGE", "--json needs -o FILE (the trace itself goes to stdout otherwise)");
    return { exec: p.positionals[0], format: "trace", out, json: p.values.json === true };
  },
  async run(args, io: CliIO) {
    const target = await checkOutputPath(args.out, io.cwd);
    const r = await exportTrace(path.resolve(io.cwd, args.exec), io.signal);
    if (target.kind === "stdout") {
      for (const chunk of traceJsonChunks(r.trace)) await io.stdout(chunk);
      return 0;
    }
    const tmp = `${target.path}.tmp-${process.pid}`;
    let bytes = 0;
    // The durable-file module's temp + fsync + rename (NO_SPACE / READ_ONLY / … coded, no temp left).
    try {
      const fh = await createTemp(tmp);
      try {
        for (const chunk of traceJsonChunks(r.trace)) {
          const b = Buffer.from(chunk, "utf8");
          bytes += b.length;
          await fh.write(b);
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (e) {
      await removeQuietly(tmp);
      throw ioError(e, target.path);
    }
    await publishTemp(tmp, target.path);
    const info = { path: target.path, bytes, events: r.events, runs: r.runs, attempts: r.attempts };
    await io.stdout(args.json ? JSON.stringify(info) + "\n" : `trace: ${r.runs} run(s), ${r.attempts} codon attempts, ${r.events} trace events, ${bytes} bytes → ${target.path}\n`);
    return 0;
  },
};
