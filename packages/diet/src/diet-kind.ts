/**
 * The diet kind: one name from the CLI flag (`diet --kind K`, aliases `--seekable` and
 * `--bodies extended`) through the library (`applyDiet(exec, {kind})`, `DietPlan.kind`,
 * `DietResult.kind`) to the manifest. This module is the only place that maps a kind to the
 * manifest's on-disk fields (format §5.1: `dietVersion`, our `framing`) and back. Pure.
 *
 * | kind | body sites | pointer journal | manifest |
 * |---|---|---|---|
 * | `compatible` (default) | `file.updated`, `state.snapshot` | one zstd frame | `dietVersion: 1`, `framing: "one-frame"` |
 * | `seekable` | same | independent frames + seek table | `dietVersion: 1`, `framing: "seekable"` (or absent: written before 2026-12-01) |
 * | `extended` | more (format §5.2) | the extended container | `dietVersion: 2` |
 */
import type { PointerFraming } from "./manifest.js";

/** What kind of diet a directory holds or a diet writes. */
export type DietKind = "compatible" | "seekable" | "extended";

/** Every kind, the default first. */
export const DIET_KINDS: readonly DietKind[] = ["compatible", "seekable", "extended"];

/** The kind a diet writes when none is asked for. */
export const DEFAULT_DIET_KIND: DietKind = "compatible";

/** True when `s` names a kind (for parsers of user input). */
export function isDietKind(s: unknown): s is DietKind {
  return s === "compatible" || s === "seekable" || s === "extended";
}

/** The manifest fields that say the kind: `dietVersion` (format §5.1) and, for dietVersion 1, `framing`. */
export function manifestFieldsOf(kind: DietKind): { dietVersion: 1 | 2; framing?: PointerFraming } {
  if (kind === "extended") return { dietVersion: 2 };
  return { dietVersion: 1, framing: kind === "seekable" ? "seekable" : "one-frame" };
}

/**
 * The kind a manifest describes. A dietVersion-1 manifest without a frame index (the reference
 * runtime's: one frame) is `compatible`; with one but no `framing` it is ours from before
 * 2026-12-01, `seekable`.
 */
export function kindOfManifest(m: { dietVersion: 1 | 2; framing?: PointerFraming; frames?: unknown }): DietKind {
  if (m.dietVersion === 2) return "extended";
  if (m.frames === undefined) return "compatible";
  return m.framing === "one-frame" ? "compatible" : "seekable";
}

/** Whether a kind moves the extended body sites (format §5.2) or only the compatible ones (§5.1). */
export function movesExtendedSites(kind: DietKind): boolean {
  return kind === "extended";
}
