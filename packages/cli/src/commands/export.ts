/**
 * `export <exec|root> -o DIR [--format parquet|ndjson]`: the fleet export (packages/fleet, see
 * docs/fleet-export.md); `export <exec> --format trace [-o FILE]`: the execution as a Chrome Trace
 * Event Format JSON (Perfetto UI, chrome://tracing).
 */
import { JournalError } from "@hankweave-journal/core";
import { exportTrace, traceJsonChunks } from "@hankweave-journal/audit";
import { checkOutputPath, createTemp, ioError, publishTemp, removeQuietly } from "@hankweave-journal/journal";
import { EXPORT_JOBS, exportExecutions, exportTargets, prepareExportDir, type ExecutionResult, type ExportSummary } from "@hankweave-journal/fleet";
import { parseCommandArgs } from "../args.js";
import { readMeasure } from "../progress.js";
import { jobsFlag } from "./fleet-ls.js";
import { escapeTerminal } from "../terminal-text.js";
import type { CliIO, Command } from "../io.js";
import { execLayout } from "../exec-path.js";

export interface ExportArgs {
  exec: string;
  format: "trace" | "parquet" | "ndjson";
  out: string;
  json: boolean;
  payloads: boolean;
  prune: boolean;
  jobs: number | undefined;
}

const FORMATS = ["parquet", "ndjson", "trace"];

const HELP = `usage: hankweave-journal export <exec|root> -o DIR [--format parquet|ndjson] [--payloads] [--prune] [--jobs N] [--json]
       hankweave-journal export <exec> --format trace [-o FILE] [--json]

Fleet export (docs/fleet-export.md): writes the tables runs, codon_attempts, transitions and
events of one execution, or of every execution found under a root, into DIR as Parquet (default)
or NDJSON files partitioned Hive-style by execution: DIR/<table>/execution=<id>/data.parquet, with
DIR/_export.json (format, schema version, every column's type and meaning) and one manifest per
execution in DIR/_executions/. Incremental: an execution whose journal did not change since it was
exported is skipped; a changed one is rewritten, each file atomically (temp, fsync, rename), so a
reader never sees half a partition. One execution's failure (broken journal, missing blob,
unreadable folder) is reported on its own line with its code and never stops the others. Journals
are only read. Query the result with \`hankweave-journal fleet query DIR "SQL"\`, DuckDB, ClickHouse.

  -o, --out DIR      the export directory (created; empty or an earlier export; never inside an execution)
  --format F         parquet (default; needs the @duckdb/node-api native module) or ndjson
  --payloads         also fill events.payload with each journal line (large)
  --prune            delete the partitions of executions no longer found under the root
  --jobs N           executions exported at the same time (default ${EXPORT_JOBS})
  --json             print the summary as one JSON object {out, format, schemaVersion, written,
                     skipped, failed, removed, executions: [{id, path, status, reason, code, message, rows, bytes}]}

Exit codes: 0 all exported or skipped, 1 an execution failed (or EXPORT_DIR_INVALID,
OUTPUT_IN_EXECUTION, NATIVE_MODULE_UNAVAILABLE), 2 usage.

Chrome trace (--format trace):

Writes the execution as a Chrome Trace Event Format JSON file, which Perfetto UI
(https://ui.perfetto.dev, "Open trace file") and chrome://tracing open: each run is a process,
each codon attempt a slice named with its outcome (reason in its args), tool calls nested inside
their attempt (assistant.action tool_use → tool.result), errors as instants, sentinel outputs on a
"sentinels" thread, and counter tracks "cost ($)" and "tokens" per run. Every event's args carry
its journal line (args.line, from 0). One streaming pass; plain or dieted journals; read-only.

  --format trace   the trace format
  -o, --out FILE   where to write (default, or "-": stdout); never inside an execution's
                   .hankweave/ directory, never onto a device or FIFO
  --json           with -o FILE: print {path, bytes, events, runs, attempts} instead of a line

Examples:
  hankweave-journal export ./my-exec --format trace -o my-exec.trace.json --json
  hankweave-journal export ./my-exec --format trace | gzip > my-exec.trace.json.gz
  hankweave-journal export /runs -o /exports/runs --jobs 2 --json
  hankweave-journal export /runs -o /exports/runs-ndjson --format ndjson --payloads --prune

Trace exit codes: 0 written, 1 failure (EXPORT_FORMAT_UNKNOWN, OUTPUT_IN_EXECUTION, NOT_A_REGULAR_FILE, no journal), 2 usage.`;

function resultLine(r: ExecutionResult): string {
  const what = r.status === "written" ? `${r.rows?.events ?? 0} events, ${r.rows?.codon_attempts ?? 0} attempts, ${r.bytes} bytes`
    : r.status === "failed" ? `${r.code}: ${r.message ?? ""}` : r.reason ?? "";
  return `${r.status.padEnd(8)} ${escapeTerminal(r.path)}  ${escapeTerminal(what.replace(/\s+/g, " "))}\n`;
}

async function runFleetExport(args: ExportArgs, io: CliIO, arg: string): Promise<number> {
  const targets = await exportTargets(arg);
  const out = await prepareExportDir(args.out, io.cwd, targets.execs);
  let summary: ExportSummary;
  try {
    summary = await exportExecutions(out, targets.targets, {
      format: args.format === "ndjson" ? "ndjson" : "parquet", payloads: args.payloads, prune: args.prune, jobs: args.jobs, root: targets.root, signal: io.signal,
      onExecution: args.json ? undefined : (r) => void io.stdout(resultLine(r)),
    });
  } catch (e) {
    // Interrupted (SIGINT): the files published so far are complete; the next run goes on from there.
    if (io.signal.aborted) {
      io.stderr("export: interrupted; re-run the same command to finish (finished executions are skipped)\n");
      return 1;
    }
    throw e;
  }
  if (args.json) await io.stdout(JSON.stringify(summary) + "\n");
  else {
    await io.stdout(`export: ${summary.written} written, ${summary.skipped} skipped, ${summary.failed} failed, ${summary.removed} removed → ${summary.out} (${summary.format}, schema ${summary.schemaVersion})\n`);
  }
  return summary.failed > 0 ? 1 : 0;
}

export const exportCommand: Command<ExportArgs> = {
  name: "export",
  summary: "export executions as Parquet/NDJSON tables (-o DIR), or one as a Chrome trace",
  help: HELP,
  parseArgs(argv) {
    const p = parseCommandArgs(argv, {
      format: { type: "string" }, out: { type: "string", short: "o" }, json: { type: "boolean" }, payloads: { type: "boolean" }, prune: { type: "boolean" },
      jobs: { type: "string" },
    }, { min: 1, max: 1 });
    const out = typeof p.values.out === "string" ? p.values.out : "-";
    const fmt = p.values.format ?? (out === "-" ? undefined : "parquet");
    if (fmt === undefined) throw new JournalError("USAGE", "export needs -o DIR (Parquet/NDJSON tables) or --format trace");
    if (!FORMATS.includes(String(fmt))) {
      throw new JournalError("EXPORT_FORMAT_UNKNOWN", `export cannot write format ${JSON.stringify(fmt)}`, { actual: String(fmt), expected: FORMATS.join(", ") }, { hint: "use --format parquet, ndjson or trace" });
    }
    const format = fmt as ExportArgs["format"];
    if (format !== "trace" && out === "-") throw new JournalError("USAGE", `--format ${format} needs -o DIR (an export is a directory)`);
    if (format === "trace" && (p.values.payloads || p.values.prune || p.values.jobs !== undefined)) throw new JournalError("USAGE", "--payloads, --prune and --jobs are for the Parquet/NDJSON export");
    if (out === "-" && p.values.json) throw new JournalError("USAGE", "--json needs -o FILE (the trace itself goes to stdout otherwise)");
    return { exec: p.positionals[0], format, out, json: p.values.json === true, payloads: p.values.payloads === true, prune: p.values.prune === true, jobs: jobsFlag(p.values.jobs) };
  },
  progress(args, layout) {
    return args.format === "trace" ? readMeasure(layout) : null;
  },
  async run(args, io: CliIO, ctx) {
    // `export <root> -o DIR`: the argument is a root or one execution; runCli resolved it against io.cwd.
    if (args.format !== "trace") return runFleetExport(args, io, execLayout(ctx).exec);
    const target = await checkOutputPath(args.out, io.cwd);
    const r = await exportTrace(execLayout(ctx), io.signal);
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
