/**
 * Lazy, verified CAS body reads with a small LRU (by bytes): a body is read and checked against
 * its SHA-256 the first time a line needs it; repeats (dedup'd bodies) come from memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { createHash } from "node:crypto";
import { isUtf8 } from "node:buffer";
import type { ExecLayout } from "@hankweave-journal/core";
import { readBlob, zstdNapi } from "@hankweave-journal/cas";
import { escapeJsonBytes } from "./json-escape.js";
import { JSON_ESCAPE_WASM_BASE64, WASM_ESCAPE_MAX_BYTES, tryCreateWasmEscaper, type WasmEscaper } from "./json-escape-wasm.js";

/**
 * Bytes of bodies kept in memory by default. Repeated bodies sit close together in journals: on
 * the 1 GB bench journal a 4 MiB cache misses 8,533 times for 8,527 unique bodies (16 MiB: 8,532),
 * and restore's peak RSS is ~30 MB lower than with 16 MiB (keeps it under 256 MB at 1 GB).
 */
export const BODY_CACHE_BYTES = 4 * 1024 * 1024;

/** An LRU of verified bodies, kept JSON-escaped as UTF-8 bytes (what rehydration splices in). */
export class BodyCache {
  private readonly map = new Map<string, Buffer>();
  private bytes = 0;
  private readonly inFlight = new Map<string, Promise<Buffer>>();

  constructor(
    private readonly layout: ExecLayout,
    private readonly budgetBytes: number = BODY_CACHE_BYTES,
  ) {}

  /**
   * The verified body `sha` of `expectedBytes` bytes, as `JSON.stringify(body)` in UTF-8
   * (throws CAS_MISSING / CAS_CORRUPT / CAS_BAD_REF).
   */
  async get(sha: string, expectedBytes: number): Promise<Buffer> {
    const hit = this.map.get(sha);
    if (hit !== undefined) {
      this.map.delete(sha);
      this.map.set(sha, hit);
      return hit;
    }
    const pending = this.inFlight.get(sha);
    if (pending) return pending;
    // The direct path answers synchronously (or null: then readBlob, whose checks give the codes).
    const direct = readEscapedDirect(this.layout, sha, expectedBytes);
    const p = direct !== null ? Promise.resolve(direct) : readBlob(this.layout, sha, expectedBytes).then(escapeJsonBytes);
    this.inFlight.set(sha, p);
    let text: Buffer;
    try {
      text = await p;
    } finally {
      this.inFlight.delete(sha);
    }
    if (expectedBytes <= this.budgetBytes / 4) {
      this.map.set(sha, text);
      this.bytes += text.length;
      for (const [k, v] of this.map) {
        if (this.bytes <= this.budgetBytes) break;
        this.map.delete(k);
        this.bytes -= v.length;
      }
    }
    return text;
  }
}

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** Blobs whose file is larger than this take readBlob's path (the direct path's input buffer stays small). */
const DIRECT_MAX_BLOB_BYTES = 1024 * 1024;

let direct: { dctx: InstanceType<ReturnType<typeof zstdNapi>["DCtx"]>; wasm: WasmEscaper; input: Buffer } | null | undefined;

/**
 * The happy path of `escapeJsonBytes(await readBlob(layout, sha, bytes))`, without its
 * allocations and copies: one open (no-follow, non-blocking) + fstat + read into a reused buffer,
 * libzstd decoding exactly `bytes` straight into the WebAssembly escaper's memory, SHA-256 and
 * UTF-8 checked there, escaped there, one copy out. Null whenever anything differs from the
 * happy path (missing, not a regular file, large, corrupt, another size or hash, not UTF-8, no
 * WebAssembly or no native zstd): the caller then takes readBlob's path, which gives the stable
 * error code or the same bytes.
 */
export function readEscapedDirect(layout: ExecLayout, sha: string, bytes: number): Buffer | null {
  if (!Number.isSafeInteger(bytes) || bytes <= 0 || bytes > WASM_ESCAPE_MAX_BYTES) return null;
  if (direct === undefined) {
    try {
      const wasm = tryCreateWasmEscaper(JSON_ESCAPE_WASM_BASE64);
      direct = wasm === null ? null : { dctx: new (zstdNapi().DCtx)(), wasm, input: Buffer.allocUnsafeSlow(64 * 1024) };
    } catch {
      direct = null;
    }
  }
  if (direct === null) return null;
  let fd = -1;
  let size: number;
  try {
    fd = openSync(layout.casBlob(sha), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    const st = fstatSync(fd);
    size = st.size;
    if (!st.isFile() || size === 0 || size > DIRECT_MAX_BLOB_BYTES) return null;
    if (direct.input.length < size) direct.input = Buffer.allocUnsafeSlow(Math.max(size, direct.input.length * 2));
    for (let done = 0; done < size; ) {
      const r = readSync(fd, direct.input, done, size - done, done);
      if (r === 0) return null;
      done += r;
    }
  } catch {
    return null;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
  const view = direct.wasm.input(bytes);
  try {
    if (direct.dctx.decompress(view, direct.input.subarray(0, size)) !== bytes) return null;
  } catch {
    return null;
  }
  if (createHash("sha256").update(view).digest("hex") !== sha || !isUtf8(view)) return null;
  return Buffer.from(direct.wasm.escape(bytes));
}
