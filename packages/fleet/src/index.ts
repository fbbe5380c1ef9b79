/**
 * Fleets of executions (issue 19): discovery of execution directories under a root, batch work
 * over them, export to Parquet/NDJSON and SQL over the export. The CLI's `fleet` commands and the
 * `--all` forms of diet/verify/restore sit on this package.
 */
export {};
