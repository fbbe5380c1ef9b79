/**
 * Verification of a dieted pair from disk: decompress every frame, rehydrate every pointer from
 * verified CAS bodies, and compare the SHA-256 and size of the result with the manifest.
 */
import * as fsp from "node:fs/promises";
import { JournalError, resolveExec, type ExecLayout, type ExecRef } from "@hankweave-journal/core";
import { OneFrameFollower, createSha256, type OneFrameWriter } from "@hankweave-journal/cas";
import { DietedSource } from "./dieted-source.js";
import { originalPieces } from "./restore-pipeline.js";
import { readManifest, type DietManifest, type FrameIndexEntry } from "./manifest.js";
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

/** Compared original chunks kept for reuse (each 4 MiB). */
const SPARE_CHUNKS = 4;

/**
 * The compatible diet's verification in step with its writing (format §5.1: verified from disk
 * before it is published), instead of a second pass over the finished temps: every byte the
 * one-frame writer puts in `events.jsonl.zst.tmp` is read back from the file once its write
 * completed and decoded (`OneFrameFollower`); each decoded block is checked against the frame
 * index and rehydrated from the CAS blobs read back from disk and verified (`DietedSource`'s
 * block path, as restore rebuilds them), and the rebuilt bytes are compared byte for byte with
 * the original's bytes as the scan read and hashed them (`original`: kept until compared; equal
 * bytes have the SHA-256 the manifest records, so a second SHA-256 pass is not needed). `finish`
 * checks that the frame ends the file with the header decoded plus its content size, and that the
 * rebuilt bytes cover the whole original; `checkManifestOnDisk` reads the manifest temp back. Any
 * failure is the stable code of the check (ZSTD_CORRUPT, CAS_CORRUPT, MANIFEST_MISMATCH, …),
 * wrapped by the diet.
 */
export class StepVerifier {
  private readonly follower: OneFrameFollower;
  private readonly src: DietedSource;
  private bytes = 0;
  /** Original chunks not yet compared (the first from `origAt` on). */
  private readonly orig: Buffer[] = [];
  private origAt = 0;
  /** Original chunks compared and no longer referenced, for the scan to read into again. */
  private readonly spare: Buffer[] = [];
  /** Index of the next block to decode. */
  private next = 0;
  private out: Buffer = Buffer.allocUnsafe(0);
  private fill = 0;
  private work: Promise<void> = Promise.resolve();
  private failure: { e: unknown } | null = null;

  /**
   * `frames`: the scan's frame index (grows as blocks are fed); `fd`: the temp being written;
   * `blobsReady`: resolves once every blob handed out so far is in place (the bodies are read back).
   */
  constructor(
    layout: ExecLayout,
    private readonly frames: FrameIndexEntry[],
    fd: number,
    path: string,
    private readonly blobsReady: () => Promise<unknown>,
  ) {
    this.follower = new OneFrameFollower(fd, path);
    this.src = DietedSource.forBlocks(layout, frames);
  }

  /** Follow `writer`: each completed write is decoded behind it. */
  attach(writer: OneFrameWriter): void {
    writer.onWritten = (position, length) => {
      if (this.failure !== null) return;
      try {
        this.follower.written(position, length, writer.pendingHeader);
      } catch (e) {
        this.failure = { e };
        return;
      }
      this.work = this.work.then(() => this.drain()).catch((e: unknown) => {
        this.failure ??= { e };
      });
    };
  }

  /** Wait for the decoding in flight to stop (before the descriptor closes), whatever happened. */
  async settle(): Promise<void> {
    this.failure ??= { e: new Error("stopped") };
    await this.work;
  }

  /** The next chunk of the original, as the scan read it (kept until the rebuilt bytes reach past it). */
  original(chunk: Buffer): void {
    this.orig.push(chunk);
  }

  /**
   * A chunk `original` gave that every rebuilt byte has been compared with (the scan is past it,
   * the compressor has copied it): the scan may read into it again. Undefined when none.
   */
  reuseChunk(): Buffer | undefined {
    return this.spare.pop();
  }

  /** Compare rebuilt bytes with the original at the current offset (MANIFEST_MISMATCH at the first difference). */
  private compare(part: Buffer): void {
    let at = 0;
    while (at < part.length) {
      const head = this.orig[0];
      if (head === undefined) throw this.mismatch("the dieted journal rebuilds to more bytes than the original", this.bytes + at);
      const n = Math.min(head.length - this.origAt, part.length - at);
      if (part.compare(head, this.origAt, this.origAt + n, at, at + n) !== 0) {
        throw this.mismatch("the dieted journal does not rebuild to the original's bytes", this.bytes + at);
      }
      at += n;
      this.origAt += n;
      if (this.origAt === head.length) {
        this.orig.shift();
        this.origAt = 0;
        if (this.spare.length < SPARE_CHUNKS) this.spare.push(head);
      }
    }
    this.bytes += part.length;
  }

  private mismatch(message: string, byteOffset: number): JournalError {
    return new JournalError("MANIFEST_MISMATCH", `${message} (from byte ${byteOffset} on)`, { byteOffset });
  }

  /** Throw the first failure so far (the scan stops early instead of compressing the rest). */
  check(): void {
    if (this.failure !== null) throw this.failure.e;
  }

  /** Decode, rehydrate and hash every block the written bytes complete. */
  private async drain(): Promise<void> {
    while (this.failure === null && this.next < this.frames.length) {
      const k = this.next;
      const f = this.frames[k];
      const size = f.pointerBytes!;
      if (this.out.length < size) this.out = Buffer.allocUnsafe(Math.max(size, this.out.length * 2));
      const block = this.out.subarray(0, size);
      this.fill = this.follower.decodeInto(block, this.fill);
      if (this.fill < size) return;
      if (f.rewritten.length > 0) await this.blobsReady();
      // The parts are views of `block` (reused for the next one) and of cached bodies: compared now.
      for (const part of await this.src.rehydrateBlock(k, block)) this.compare(part);
      this.fill = 0;
      this.next++;
    }
  }

  /** After the writer finished `fileBytes`: the rest decoded, the frame's end and header, the whole original rebuilt. */
  async finish(fileBytes: number, original: { bytes: number }, manifestPath: string): Promise<void> {
    await this.work;
    this.check();
    await this.drain();
    this.check();
    if (this.next !== this.frames.length) {
      throw new JournalError("ZSTD_CORRUPT", `the written frame ends in block ${this.next} of ${this.frames.length}`, { path: manifestPath });
    }
    this.follower.checkEnd(fileBytes);
    if (this.bytes !== original.bytes || this.orig.length > 0) {
      throw new JournalError("MANIFEST_MISMATCH", "the dieted journal does not rebuild to the original's size", {
        path: manifestPath, expected: original.bytes, actual: this.bytes,
      });
    }
  }
}

/**
 * The manifest temp read back: the bytes written, and valid as readers parse it (MANIFEST_INVALID,
 * MANIFEST_MISMATCH).
 */
export async function checkManifestOnDisk(layout: ExecLayout, path: string, written: Buffer): Promise<DietManifest> {
  const onDisk = await fsp.readFile(path);
  if (!onDisk.equals(written)) {
    throw new JournalError("MANIFEST_MISMATCH", `${path} does not hold the manifest written`, { path, expected: written.length, actual: onDisk.length });
  }
  return readManifest(layout, path);
}
