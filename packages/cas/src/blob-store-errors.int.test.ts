/** readBlob's error details: the blob's path where the error names no file, the error's own otherwise. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { JournalError, layoutOf } from "@hankweave-journal/core";

const failure: { error: JournalError | null } = { error: null };
vi.mock("./zstd.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("./zstd.js")>();
  return {
    ...real,
    decompressZstd: (...args: Parameters<typeof real.decompressZstd>) => (failure.error ? Promise.reject(failure.error) : real.decompressZstd(...args)),
  };
});
const { putBlob, readBlob } = await import("./blob-store.js");

const dirs: string[] = [];
afterEach(() => {
  failure.error = null;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
async function blob(): Promise<{ exec: string; sha: string; file: string }> {
  const exec = fs.mkdtempSync(path.join(os.tmpdir(), "hw-cas-err-"));
  fs.mkdirSync(layoutOf(exec).eventsDir, { recursive: true });
  dirs.push(exec);
  const body = Buffer.from("x".repeat(5000));
  const { sha256 } = await putBlob(exec, body);
  return { exec, sha: sha256, file: layoutOf(exec).casBlob(sha256) };
}
async function errorOf(p: Promise<unknown>): Promise<JournalError> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(JournalError);
  return e as JournalError;
}

describe("readBlob error details", () => {
  it("puts the blob's path on a decoder error that names no file", async () => {
    const { exec, sha, file } = await blob();
    failure.error = new JournalError("ZSTD_TOO_LARGE", "frame claims too much", { expected: 1 });
    const e = await errorOf(readBlob(exec, sha, 5000));
    expect(e.code).toBe("ZSTD_TOO_LARGE");
    expect(e.details.path).toBe(file);
  });

  it("keeps the path of an error that names its own (the native module that did not load)", async () => {
    const { exec, sha } = await blob();
    failure.error = new JournalError("NATIVE_MODULE_UNAVAILABLE", "zstd-napi could not be loaded", { path: "zstd-napi" });
    const e = await errorOf(readBlob(exec, sha, 5000));
    expect(e.code).toBe("NATIVE_MODULE_UNAVAILABLE");
    expect(e.details.path).toBe("zstd-napi");
  });

  it("reads the blob when the decoder works (the mock passes through)", async () => {
    const { exec, sha } = await blob();
    expect((await readBlob(exec, sha, 5000)).toString()).toBe("x".repeat(5000));
  });
});
