/**
 * `verify`: can the files of an execution directory be trusted? A cheap default (one streaming
 * scan of the journal: corrupt lines, torn tail, sidecar or manifest against the file, and —
 * for dieted journals — every referenced CAS body, which the reader rehydrates and checks) and
 * `deep` (also every CAS blob's hash, a restore dry run's SHA-256 against `originalSha256`, and
 * the fold of the journal against state.json). Read-only.
 */
import { existsSync } from "node:fs";
import { isJournalError, type Finding, resolveExec, type ExecRef, type ExecLayout } from "@hankweave-journal/core";
import { listBlobs, readBlob } from "@hankweave-journal/cas";
import { openReader, readManifest, verifyDiet } from "@hankweave-journal/diet";
import { readSidecarStatus } from "@hankweave-journal/journal";
import { checkSavedState, foldExecution } from "@hankweave-journal/state";
import { severityOf } from "./audit-codes.js";

/** One check and how it went. */
export interface VerifyCheck {
  name: "journal" | "sidecar" | "manifest" | "cas-blobs" | "restore-dry-run" | "state";
  status: "ok" | "findings" | "skipped";
  /** Why it was skipped, or a short note of what was checked. */
  note: string;
  ms: number;
}

/** The verify report (`--json` prints it). */
export interface VerifyReport {
  exec: string;
  kind: "plain" | "dieted";
  deep: boolean;
  events: number;
  checks: VerifyCheck[];
  findings: Finding[];
  summary: { error: number; warning: number; info: number };
  /** No finding of severity error or warning. */
  ok: boolean;
}

function finding(code: string, message: string, extra: Partial<Finding> = {}): Finding {
  return { code, severity: severityOf(code), message, ...extra };
}

function fromError(e: unknown, fallbackCode: string): Finding {
  if (isJournalError(e)) return finding(e.code, e.message, { details: e.details });
  return finding(fallbackCode, (e as Error).message);
}

/**
 * Verify `exec` (see the module comment). Throws only when there is no journal at all or on an
 * I/O error; everything else is a finding.
 * @example const r = await verifyExecution("/runs/x", { deep: true }); r.ok
 */
/** Complete lines that `JSON.parse` accepts (the reference runtime's totalEvents), through the transparent reader. */
async function runtimeEventCount(layout: ExecLayout): Promise<number> {
  const reader = await openReader(layout);
  let n = 0;
  try {
    for await (const l of reader.lines()) {
      if (!l.terminated) continue;
      try {
        JSON.parse(l.bytes.toString("utf8"));
        n++;
      } catch {
        // not counted
      }
    }
  } finally {
    await reader.close();
  }
  return n;
}

export async function verifyExecution(exec: ExecRef, opts: { deep?: boolean } = {}): Promise<VerifyReport> {
  const deep = opts.deep === true;
  const layout = resolveExec(exec);
  const findings: Finding[] = [];
  const checks: VerifyCheck[] = [];
  const run = async (name: VerifyCheck["name"], body: () => Promise<string>): Promise<void> => {
    const t = performance.now();
    const before = findings.length;
    const note = await body();
    checks.push({ name, status: findings.length > before ? "findings" : "ok", note, ms: Math.round(performance.now() - t) });
  };
  const skip = (name: VerifyCheck["name"], note: string): void => void checks.push({ name, status: "skipped", note, ms: 0 });

  const reader = await openReader(layout);
  const kind = reader.kind;
  let events = 0;
  let lastId: string | null = null;
  let bytes = 0;
  try {
    bytes = (await reader.info()).bytes;
    await run("journal", async () => {
      try {
        for await (const rec of reader.events({ onFinding: (f) => findings.push({ ...f, severity: severityOf(f.code, f.severity) }) })) {
          events += 1;
          lastId = rec.event.id;
        }
      } catch (e) {
        findings.push(fromError(e, "CORRUPT_LINE"));
      }
      return `${events} events, ${bytes} bytes scanned`;
    });
  } finally {
    await reader.close();
  }

  if (kind === "plain") {
    await run("sidecar", async () => {
      const s = await readSidecarStatus(exec, bytes);
      if (s.status === "absent") return "absent (optional)";
      if (s.status === "invalid") findings.push(finding("SIDECAR_INVALID", `events.meta.json: ${s.reason}`, { details: { path: layout.sidecar } }));
      else if (s.status === "lying") {
        findings.push(finding("SIDECAR_MISMATCH", `events.meta.json vouches for ${s.sidecar.byteLength} bytes but the file has ${bytes}`, {
          details: { path: layout.sidecar, expected: bytes, actual: s.sidecar.byteLength },
        }));
      } else if (s.status === "stale") {
        findings.push(finding("SIDECAR_STALE", `events.meta.json covers ${s.sidecar.byteLength} of ${bytes} bytes`, { details: { path: layout.sidecar } }));
      } else {
        if (s.sidecar.totalEvents !== events) {
          findings.push(finding("SIDECAR_MISMATCH", `events.meta.json says ${s.sidecar.totalEvents} events, the file has ${events}`, {
            details: { path: layout.sidecar, field: "totalEvents", expected: events, actual: s.sidecar.totalEvents },
          }));
        }
        if (s.sidecar.lastEventId !== lastId) {
          findings.push(finding("SIDECAR_MISMATCH", `events.meta.json lastEventId ${JSON.stringify(s.sidecar.lastEventId)} is not the file's ${JSON.stringify(lastId)}`, {
            details: { path: layout.sidecar, field: "lastEventId", expected: lastId, actual: s.sidecar.lastEventId },
          }));
        }
      }
      return s.status;
    });
    skip("manifest", "plain journal");
    skip("cas-blobs", "plain journal");
    skip("restore-dry-run", "plain journal");
  } else {
    skip("sidecar", "dieted journal (the manifest supersedes it)");
    await run("manifest", async () => {
      try {
        const m = await readManifest(layout);
        // totalEvents is what the reference runtime counts (format §5.1: complete lines JSON.parse
        // accepts, `123`/`null`/`{}` included), which our event count excludes: count that way
        // too before calling a manifest wrong (only when the counts differ: one more scan).
        if (m.totalEvents !== events && m.totalEvents !== (await runtimeEventCount(layout))) {
          findings.push(finding("MANIFEST_INVALID", `journal.meta.json says ${m.totalEvents} events, the journal has ${events}`, {
            details: { path: layout.manifest, field: "totalEvents", expected: events, actual: m.totalEvents },
          }));
        }
        if (m.originalBytes !== bytes) {
          findings.push(finding("MANIFEST_INVALID", `journal.meta.json says ${m.originalBytes} bytes, the rehydrated journal has ${bytes}`, {
            details: { path: layout.manifest, field: "originalBytes", expected: bytes, actual: m.originalBytes },
          }));
        }
        return `dietVersion ${m.dietVersion}, ${m.totalEvents} events`;
      } catch (e) {
        findings.push(fromError(e, "MANIFEST_INVALID"));
        return "unreadable";
      }
    });
    if (!deep) {
      skip("cas-blobs", "--deep (referenced bodies were checked by the journal scan)");
      skip("restore-dry-run", "--deep");
    } else {
      await run("cas-blobs", async () => {
        const blobs = await listBlobs(exec);
        for (const b of blobs) {
          try {
            await readBlob(exec, b.sha256);
          } catch (e) {
            findings.push(fromError(e, "CAS_CORRUPT"));
          }
        }
        return `${blobs.length} blobs hashed`;
      });
      await run("restore-dry-run", async () => {
        try {
          const v = await verifyDiet(exec);
          return `sha256 ${v.originalSha256.slice(0, 12)}…, ${v.originalBytes} bytes`;
        } catch (e) {
          const f = fromError(e, "RESTORE_MISMATCH");
          findings.push(f.code === "MANIFEST_MISMATCH" ? { ...f, code: "RESTORE_MISMATCH", severity: severityOf("RESTORE_MISMATCH") } : f);
          return "failed";
        }
      });
    }
  }

  if (!deep) skip("state", "--deep");
  else if (!existsSync(layout.state)) skip("state", "no state.json");
  else {
    await run("state", async () => {
      try {
        const fold = await foldExecution(exec);
        const { report } = checkSavedState(exec, fold, fold.savedStates);
        if (report.stateFile === "corrupt") findings.push(finding("STATE_UNREADABLE", `${layout.state} cannot be parsed`, { details: { path: layout.state } }));
        else if (report.stateFile === "mismatch" || report.stateFile === "other-execution") {
          findings.push(finding("STATE_MISMATCH", `${layout.state} differs from the fold of the journal (${report.stateFile}): ${report.differences.slice(0, 5).join(", ")}`, {
            details: { path: layout.state, differences: report.differences },
          }));
        }
        return `${report.stateFile} (${fold.transitions} transitions folded)`;
      } catch (e) {
        findings.push(fromError(e, "STATE_MISMATCH"));
        return "failed";
      }
    });
  }

  const summary = { error: 0, warning: 0, info: 0 };
  for (const f of findings) summary[f.severity] += 1;
  return { exec: layout.exec, kind, deep, events, checks, findings, summary, ok: summary.error === 0 && summary.warning === 0 };
}
