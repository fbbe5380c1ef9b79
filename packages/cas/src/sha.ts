/**
 * SHA-256 helpers: the only hash of the diet (format §5.1). Bodies and whole journals are identified
 * and verified by lowercase hex SHA-256, because the zstd frames we write carry no checksum.
 */
import { createHash, type Hash } from "node:crypto";

/** Lowercase hex SHA-256 of `data` (strings hashed as UTF-8). @example sha256Hex("") // "e3b0c4…" */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** An incremental SHA-256: feed chunks with `update`, read once with `digestHex`. */
export interface Sha256Stream {
  update(chunk: Uint8Array): void;
  digestHex(): string;
}

/** A fresh incremental SHA-256 (for journals hashed while streaming, never held whole). */
export function createSha256(): Sha256Stream {
  const h: Hash = createHash("sha256");
  return {
    update: (chunk) => {
      h.update(chunk);
    },
    digestHex: () => h.digest("hex"),
  };
}
