// Audit by line order, the SQLite index and queries, verify, and the HTML report (format §7).
export { AUDIT_CODES, FINDING_SEVERITY, severityOf } from "./audit-codes.js";
export type { AuditCode, AuditCodeInfo } from "./audit-codes.js";
export type {
  AuditRow, AuditFinding, AuditSink, AttemptOutcome, CodonAttempt, EventInfo, FoldEvent, RunSummary,
} from "./audit-types.js";
export { AuditFold } from "./audit-fold.js";
export type { AuditFoldSnapshot } from "./audit-fold.js";
export { compareResultingState, transitionProblem, recordTokens } from "./fold-helpers.js";
export type { ResultingStateDiff, TransitionProblem } from "./fold-helpers.js";
export { summarizeRuns } from "./run-summary.js";
export { streamAudit, auditExecution, passesFilter } from "./audit-run.js";
export type { AuditFilter, AuditCallbacks, AuditEnd, AuditReport } from "./audit-run.js";
export { summarizeAudit, formatAuditSummary, auditSummaryOf, formatUsd } from "./audit-summary.js";
export type { AuditSummary, RunLine } from "./audit-summary.js";
export { buildIndex } from "./index-build.js";
export type { IndexResult, IndexOptions } from "./index-build.js";
export { readIndexMeta } from "./index-meta.js";
export type { IndexMeta } from "./index-meta.js";
export { queryIndex, streamQuery, QUERY_MAX_ROWS, QUERY_TIMEOUT_MS, QUERY_MAX_MEMORY_MB, QUERY_MEMORY_BOUNDS_SQLITE } from "./index-query.js";
export type { QueryResult, QueryLimits } from "./index-query.js";
export { INDEX_SCHEMA_VERSION, INDEX_TABLES, SCHEMA_TABLES_SQL, SCHEMA_INDEXES_SQL } from "./index-schema.js";
export { IndexWriter } from "./index-writer.js";
export { collectReportData, MAX_REPORT_FINDINGS, MAX_COST_POINTS } from "./report-data.js";
export type { ReportData, CostPoint } from "./report-data.js";
export { renderReportHtml, writeReport } from "./report-html.js";
export type { ReportResult } from "./report-html.js";
export { attemptLabel, OUTCOME_COLORS } from "./report-svg.js";
export { verifyExecution } from "./verify.js";
export type { VerifyReport, VerifyCheck } from "./verify.js";
export {
  OUTCOME_ORDER, CRASH_MESSAGE, isCrashRecord, outcomeOf, zeroOutcomes, countOutcomes, formatOutcomes, runsOldestFirst, runOutcomes,
  tokenTotal, reasonOf,
} from "./outcomes.js";
export type { OutcomeCounts } from "./outcomes.js";
export { summaryOf, summaryRunOf, summarizeExecution, groupAttempts, baseCodonId } from "./summary.js";
export type { ExecutionSummary, SummaryRun, SummaryAttempt, SummaryGroup } from "./summary.js";
export { formatSummary } from "./summary-text.js";
export { parseBlamePath, readAt, indexPathText } from "./blame-path.js";
export type { BlamePath, Segment, RunSelector, CodonSelector } from "./blame-path.js";
export { blameExecution, blameMany, BlameTracker, resolvePath } from "./blame.js";
export type { BlameResult, BlameChange, BlameSource, BlameOptions } from "./blame.js";
export { exportTrace, traceJsonChunks } from "./trace-export.js";
export type { TraceEvent, TraceFile, TraceResult } from "./trace-export.js";
