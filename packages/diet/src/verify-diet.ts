/**
 * Verification of a dieted pair from disk: decompress every frame, rehydrate every pointer from
 * verified CAS bodies, and compare the SHA-256 and size of the result with the manifest.
 */
import * as fsp from "node:fs/promises";
import { JournalError, resolveExec, type ExecRef } from "@hankweave-journal/core";
import { createSha256 } from "@hankweave-journal/cas";
import { DietedSource } from "./dieted-source.js";
import { originalPieces } from "./restore-pipeline.js";
import { readManifest, type DietManifest } from "./manifest.js";
import { isExtDiet, verifyExtDiet } from "./ext/ext-diet.js";

/** What a verification found. */
export interface DietVerification {
  originalSha256: string;
  originalBytes: number;
  manifest: DietManifest;
  /** Bytes of the pointer journal and the manifest on disk. */
  pointerJournalBytes: number;
  manifestBytes: number;
}

/**
 * Verify the pair (by default the published one). Throws MANIFEST_INVALID, ZSTD_CORRUPT,
 * CAS_MISSING, CAS_CORRUPT, CAS_BAD_REF or MANIFEST_MISMATCH; never modifies anything.
 *
 * @example const v = await verifyDiet("/runs/x"); v.originalSha256
 */
export async function verifyDiet(
  exec: ExecRef,
  paths: { zst?: string; manifest?: string; workers?: number } = {},
): Promise<DietVerification> {
  const layout = resolveExec(exec);
  const manifestPath = paths.manifest ?? layout.manifest;
  if (isExtDiet(layout, manifestPath)) return verifyExtDiet(layout, paths);
  const manifest = await readManifest(layout, manifestPath);
  const src = await DietedSource.open(layout, manifest, paths.zst ?? layout.dietedJournal);
  const sha = createSha256();
  let bytes = 0;
  try {
    // The restore's pipeline without the writes: worker threads rebuild the frames (in-thread
    // path for small or foreign journals, and for whatever a worker's checks refuse).
    for await (const { parts, release } of originalPieces(src, paths.workers)) {
      for (const part of parts) {
        sha.update(part);
        bytes += part.length;
      }
      release?.();
    }
  } finally {
    await src.close();
  }
  const digest = sha.digestHex();
  if (digest !== manifest.originalSha256 || bytes !== manifest.originalBytes) {
    throw new JournalError("MANIFEST_MISMATCH", "the dieted journal does not rebuild to the manifest's size and SHA-256", {
      path: manifestPath,
      expected: { originalSha256: manifest.originalSha256, originalBytes: manifest.originalBytes },
      actual: { originalSha256: digest, originalBytes: bytes },
    });
  }
  return {
    originalSha256: digest,
    originalBytes: bytes,
    manifest,
    pointerJournalBytes: src.zstBytes,
    manifestBytes: (await fsp.stat(manifestPath)).size,
  };
}
