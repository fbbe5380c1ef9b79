import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { layoutOf, type JournalReader } from "@hankweave-journal/core";
import { sha256Hex } from "@hankweave-journal/cas";
import { execFileSync } from "node:child_process";
import { journalPresence, journalPresenceSync, openPlainReader, openRegularForRead, openRegularSync } from "@hankweave-journal/journal";
import { DietedSource } from "./dieted-source.js";
import { openDietedReader } from "./dieted-reader.js";
import { readManifest } from "./manifest.js";
import { restoreJournal } from "./restore.js";
import { verifyDiet } from "./verify-diet.js";
import { codeOf, dietBytes, dietWithLyingLineLength, finishedJournal, rmExec } from "./test-helpers.js";

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmExec(d);
});

/** Bodies of 4–30 KB, some repeated, some with characters JSON escapes. */
function bodiesFor(n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(`# file ${i % 7}\n"quoted" \\ tab\t é ${"x".repeat(4096 + (i % 7) * 3000)}\n`);
  return out;
}

describe("restore fast paths", () => {
  it("yields frames without rewritten lines as the decompressed frame itself, and frames with many rewritten lines spliced exactly", async () => {
    // filler 400: the first frames hold only verbatim lines; a dense tail of bodies follows.
    const head = finishedJournal(bodiesFor(1), null, 400);
    const dense = finishedJournal(bodiesFor(40), "RunCompleted", 0);
    const original = Buffer.concat([head, dense]);
    const exec = await dietBytes(original, { frameTargetBytes: 2000, kind: "seekable" });
    made.push(exec);
    const layout = layoutOf(exec);
    const m = await readManifest(layout);
    const plain = m.frames!.filter((f) => f.rewritten.length === 0).length;
    const many = m.frames!.filter((f) => f.rewritten.length >= 4).length; // flat: 2 numbers per line
    expect(plain).toBeGreaterThan(2);
    expect(many).toBeGreaterThan(2);

    const src = await DietedSource.open(layout, m);
    try {
      const got: Buffer[] = [];
      let k = 0;
      for await (const parts of src.originalParts()) {
        if (m.frames![k].rewritten.length === 0) {
          expect(parts.length).toBe(1);
          expect(parts[0].equals(await src.framePointerBytes(k))).toBe(true);
        }
        got.push(...parts);
        k++;
      }
      expect(k).toBe(m.frames!.length);
      expect(Buffer.concat(got).equals(original)).toBe(true);
    } finally {
      await src.close();
    }
    expect((await verifyDiet(exec)).originalSha256).toBe(sha256Hex(original));
    expect((await verifyDiet(exec, { workers: 2 })).originalSha256).toBe(sha256Hex(original));
    const r = await restoreJournal(exec);
    expect(r.status).toBe("restored");
    expect(fs.readFileSync(layout.journal).equals(original)).toBe(true);
  });

  it("refuses (MANIFEST_MISMATCH) a rewritten line whose rehydrated length differs from the manifest, publishing nothing", async () => {
    const { exec } = await dietWithLyingLineLength(finishedJournal(bodiesFor(5), "RunCompleted", 3));
    made.push(exec);
    const layout = layoutOf(exec);
    expect(await codeOf(restoreJournal(exec))).toBe("MANIFEST_MISMATCH");
    expect(fs.existsSync(layout.journal)).toBe(false);
    expect(fs.existsSync(layout.restoreTmp)).toBe(false);
  });

  it("restores the same bytes with a background fdatasync every few KiB (the overlapped writeback)", async () => {
    const original = finishedJournal(bodiesFor(30), "RunCompleted", 200);
    const exec = await dietBytes(original, { frameTargetBytes: 4000, kind: "seekable" });
    made.push(exec);
    const r = await restoreJournal(exec, { datasyncEveryBytes: 1024 });
    expect(r.status).toBe("restored");
    expect(fs.readFileSync(layoutOf(exec).journal).equals(original)).toBe(true);
    expect(fs.existsSync(layoutOf(exec).restoreTmp)).toBe(false);
  });

  it("getLine (one frame, one line materialised) equals the range reader and the plain reader on every line", async () => {
    // Verbatim, rewritten, blank and corrupt lines, a missing final newline, small frames.
    const body = finishedJournal(bodiesFor(12), "RunCompleted", 30);
    const original = Buffer.concat([body, Buffer.from("\n{not json\n   \n"), finishedJournal(bodiesFor(3), null, 5), Buffer.from('{"torn":')]);
    const exec = await dietBytes(original, { frameTargetBytes: 3000, kind: "seekable" });
    made.push(exec);
    const plainExec = await dietBytes(original);
    made.push(plainExec);
    await restoreJournal(plainExec);
    const dieted = await openDietedReader(exec);
    const plain = await openPlainReader(plainExec);
    try {
      const all = [];
      for await (const l of dieted.lines()) all.push(l);
      expect(Buffer.concat(all.map((l) => (l.terminated ? Buffer.concat([l.bytes, Buffer.from("\n")]) : l.bytes))).equals(original)).toBe(true);
      for (const l of all) {
        const [one] = await collect(dieted.lines({ fromLine: l.line, toLine: l.line }));
        expect(one.offset).toBe(l.offset);
        expect(Buffer.from(one.bytes).equals(l.bytes)).toBe(true);
        expect(await getLineView(dieted, l.line)).toEqual(await getLineView(plain, l.line));
      }
      const past = all.length + 3;
      expect(await dieted.getLine(past).then(() => "none", (e: { code?: string }) => e.code)).toBe(
        await plain.getLine(past).then(() => "none", (e: { code?: string }) => e.code));
    } finally {
      await dieted.close();
      await plain.close();
    }
  });

  it("openRegularSync refuses exactly as openRegularForRead does (missing, directory, FIFO) and opens a regular file", async () => {
    const exec = await dietBytes(finishedJournal(bodiesFor(1), "RunCompleted", 3));
    made.push(exec);
    const dir = layoutOf(exec).eventsDir;
    const fifo = `${dir}/a-fifo`;
    execFileSync("mkfifo", [fifo]);
    for (const path of [`${dir}/missing`, dir, fifo, `${dir}/missing/x`]) {
      const sync = (() => {
        try {
          openRegularSync(path);
          return null;
        } catch (e) {
          return { code: (e as { code?: string }).code, message: (e as Error).message };
        }
      })();
      const async = await openRegularForRead(path).then(async (fh) => {
        await fh.close();
        return null;
      }, (e: Error & { code?: string }) => ({ code: e.code, message: e.message }));
      expect(sync).not.toBeNull();
      expect(sync).toEqual(async);
    }
    const fd = openRegularSync(layoutOf(exec).dietedJournal);
    fs.closeSync(fd);
  });
});

/** What getLine gave, comparable with toEqual: a record, null, or the error code. */
async function getLineView(reader: JournalReader, line: number): Promise<unknown> {
  try {
    const r = await reader.getLine(line);
    return r === null ? null : { line: r.line, offset: r.offset, bytes: r.bytes.toString("hex"), event: r.event };
  } catch (e) {
    return (e as { code?: string }).code;
  }
}

describe("open path", () => {
  it("journalPresence (synchronous stats, async wrapper alike) tells plain, dieted, both halves, none and a missing exec apart", async () => {
    const exec = await dietBytes(finishedJournal(bodiesFor(1), "RunCompleted", 3));
    made.push(exec);
    const l = layoutOf(exec);
    const is = async (e: string, want: unknown): Promise<void> => {
      expect(journalPresenceSync(e)).toEqual(want);
      expect(await journalPresence(e)).toEqual(want);
    };
    await is(exec, { kind: "dieted" });
    fs.copyFileSync(l.manifest, `${l.eventsDir}/m.bak`);
    fs.rmSync(l.manifest);
    await is(exec, { kind: "half", present: "zst" });
    fs.renameSync(`${l.eventsDir}/m.bak`, l.manifest);
    fs.renameSync(l.dietedJournal, `${l.eventsDir}/z.bak`);
    await is(exec, { kind: "half", present: "manifest" });
    fs.writeFileSync(l.journal, "{}\n");
    await is(exec, { kind: "plain" });
    fs.rmSync(l.journal);
    fs.rmSync(l.manifest);
    await is(exec, { kind: "none", execExists: true });
    await is(`${exec}/does-not-exist`, { kind: "none", execExists: false });
    const file = `${exec}/a-file`;
    fs.writeFileSync(file, "x");
    await is(file, { kind: "none", execExists: false });
  });
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
