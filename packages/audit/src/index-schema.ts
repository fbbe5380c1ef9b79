/**
 * The schema of the derived SQLite index (`layoutOf(exec).index`). Documented in docs/audit.md;
 * bump INDEX_SCHEMA_VERSION on any change (an index of another version is rebuilt, never migrated).
 */

/** Version stored in `meta.schema_version`. */
export const INDEX_SCHEMA_VERSION = 3;

/** Tables, created before the bulk insert. */
export const SCHEMA_TABLES_SQL = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE events (
  line INTEGER PRIMARY KEY, byte_offset INTEGER NOT NULL, id TEXT NOT NULL, time TEXT NOT NULL,
  type TEXT NOT NULL, category TEXT NOT NULL, run TEXT, codon TEXT, size INTEGER NOT NULL
);
CREATE TABLE transitions (
  line INTEGER PRIMARY KEY, time TEXT NOT NULL, type TEXT NOT NULL, run TEXT, codon TEXT,
  from_status TEXT, to_status TEXT, applied INTEGER NOT NULL,
  codon_cost_after REAL, run_cost_after REAL,
  journaled_current_run_id TEXT, journaled_run_count INTEGER, journaled_total_cost REAL, journaled_current_run_cost REAL,
  recomputed_current_run_id TEXT, recomputed_run_count INTEGER NOT NULL, recomputed_total_cost REAL NOT NULL,
  recomputed_current_run_cost REAL NOT NULL
);
CREATE TABLE findings (
  seq INTEGER PRIMARY KEY, line INTEGER NOT NULL, byte_offset INTEGER, code TEXT NOT NULL, severity TEXT NOT NULL,
  run TEXT, codon TEXT, message TEXT NOT NULL, details TEXT
);
CREATE TABLE runs (
  run_seq INTEGER PRIMARY KEY, run TEXT NOT NULL, status TEXT NOT NULL, start_line INTEGER, end_line INTEGER, start_time TEXT, end_time TEXT,
  cost REAL NOT NULL, attempts INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, cache_creation_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL
);
CREATE TABLE codon_attempts (
  run_seq INTEGER NOT NULL, run TEXT NOT NULL, codon TEXT NOT NULL, attempt INTEGER NOT NULL, idx INTEGER NOT NULL,
  start_line INTEGER, end_line INTEGER, start_time TEXT, end_time TEXT, status TEXT NOT NULL, outcome TEXT NOT NULL,
  cost REAL NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  cache_creation_tokens INTEGER NOT NULL, cache_read_tokens INTEGER NOT NULL,
  loop_id TEXT, loop_iteration INTEGER, failure_reason TEXT,
  PRIMARY KEY (run_seq, idx)
) WITHOUT ROWID;
`;

/** Secondary indexes, created after the bulk insert of a full build (faster than maintaining them row by row). */
export const SCHEMA_INDEXES_SQL = `
CREATE INDEX events_run_codon ON events(run, codon);
CREATE INDEX events_id ON events(id);
CREATE INDEX transitions_run_codon ON transitions(run, codon);
CREATE INDEX transitions_type ON transitions(type);
CREATE INDEX findings_code ON findings(code);
CREATE INDEX findings_line ON findings(line);
CREATE INDEX codon_attempts_codon ON codon_attempts(run, codon, attempt);
`;

/** The data tables, in the order docs and tests list them. */
export const INDEX_TABLES = ["events", "transitions", "codon_attempts", "runs", "findings", "meta"] as const;
