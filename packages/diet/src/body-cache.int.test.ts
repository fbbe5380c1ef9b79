// The direct body path of restore and the dieted reader (`readEscapedDirect`): the same bytes as
// `escapeJsonBytes(readBlob(...))` on the happy path, null on anything else (then readBlob's path
// gives the stable code, tested through BodyCache here and through restore in bad-input).
import * as fs from "node:fs";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import fc from "fast-check";
import { layoutOf } from "@hankweave-journal/core";
import { compressOneShot, putBlob, readBlob, sha256Hex } from "@hankweave-journal/cas";
import { BodyCache, readEscapedDirect } from "./body-cache.js";
import { escapeJsonBytes } from "./json-escape.js";
import { codeOf, rmExec, tempExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

function exec(): string {
  const e = tempExec(Buffer.from("{}\n"));
  made.push(e);
  return e;
}

describe("readEscapedDirect (restore's body path)", () => {
  it("gives exactly JSON.stringify of the body, as readBlob + escapeJsonBytes do, for any text", async () => {
    const e = exec();
    const layout = layoutOf(e);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "grapheme", minLength: 1, maxLength: 300 }), fc.string({ unit: "binary", minLength: 1, maxLength: 40 }), async (a, b) => {
        const text = a + b + '"\\\n\u0001' + a;
        const body = Buffer.from(text, "utf8");
        const { sha256 } = await putBlob(e, body);
        const direct = readEscapedDirect(layout, sha256, body.length);
        expect(direct?.toString("utf8")).toBe(JSON.stringify(text));
        expect(direct!.equals(escapeJsonBytes(await readBlob(e, sha256, body.length)))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("answers null for a missing, symlinked, directory, FIFO, corrupt, foreign, resized or non-UTF-8 blob, and BodyCache still gives the codes", async () => {
    const e = exec();
    const layout = layoutOf(e);
    const body = Buffer.from("a body ".repeat(50));
    const { sha256 } = await putBlob(e, body);
    expect(readEscapedDirect(layout, sha256, body.length)).not.toBeNull();
    // Another size than the pointer says (shorter, longer), and sizes no body has.
    for (const n of [body.length - 1, body.length + 1, 0, -1, 1.5, Number.NaN]) expect(readEscapedDirect(layout, sha256, n)).toBeNull();

    // A blob holding the body less its last byte, read right after the whole body (the escaper's
    // memory still holds that last byte): refused, as readBlob refuses it.
    expect(readEscapedDirect(layout, sha256, body.length)).not.toBeNull();
    const whole = fs.readFileSync(layout.casBlob(sha256));
    fs.writeFileSync(layout.casBlob(sha256), await compressOneShot(body.subarray(0, body.length - 1), 3));
    expect(readEscapedDirect(layout, sha256, body.length)).toBeNull();
    expect(await codeOf(new BodyCache(layout).get(sha256, body.length))).toBe("CAS_CORRUPT");
    fs.writeFileSync(layout.casBlob(sha256), whole);

    const missing = sha256Hex(Buffer.from("never stored"));
    expect(readEscapedDirect(layout, missing, 12)).toBeNull();
    expect(await codeOf(new BodyCache(layout).get(missing, 12))).toBe("CAS_MISSING");

    // A blob file that is a symlink to a valid blob, a directory, a FIFO: not followed, not read.
    const other = Buffer.from("the other body ".repeat(20));
    const otherSha = sha256Hex(other);
    fs.mkdirSync(layout.casShard(otherSha), { recursive: true });
    fs.symlinkSync(layout.casBlob(sha256), layout.casBlob(otherSha));
    expect(readEscapedDirect(layout, otherSha, other.length)).toBeNull();
    fs.rmSync(layout.casBlob(otherSha));
    fs.mkdirSync(layout.casBlob(otherSha));
    expect(readEscapedDirect(layout, otherSha, other.length)).toBeNull();
    fs.rmSync(layout.casBlob(otherSha), { recursive: true });
    execFileSync("mkfifo", [layout.casBlob(otherSha)]);
    expect(readEscapedDirect(layout, otherSha, other.length)).toBeNull();
    fs.rmSync(layout.casBlob(otherSha));

    // A valid frame of another body under this sha (same size), and bytes that are no frame.
    const same = Buffer.from("b".repeat(body.length));
    fs.writeFileSync(layout.casBlob(otherSha), await compressOneShot(same, 3));
    expect(readEscapedDirect(layout, otherSha, same.length)).toBeNull();
    expect(await codeOf(new BodyCache(layout).get(otherSha, same.length))).toBe("CAS_CORRUPT");
    fs.writeFileSync(layout.casBlob(otherSha), Buffer.from("not a zstd frame at all"));
    expect(readEscapedDirect(layout, otherSha, other.length)).toBeNull();
    expect(await codeOf(new BodyCache(layout).get(otherSha, other.length))).toBe("CAS_CORRUPT");

    // Not UTF-8: the string path of escapeJsonBytes (replacement characters), as before.
    const bad = Buffer.from([0x41, 0xff, 0xfe, 0x42, 0xc3]);
    const badSha = (await putBlob(e, bad)).sha256;
    expect(readEscapedDirect(layout, badSha, bad.length)).toBeNull();
    const viaCache = await new BodyCache(layout).get(badSha, bad.length);
    expect(viaCache.toString("utf8")).toBe(JSON.stringify(bad.toString("utf8")));
  });
});
