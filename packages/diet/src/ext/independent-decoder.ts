/**
 * TEST-ONLY independent decoder of the extended diet's container, written from the tables in
 * `docs/extended-diet.md` (not exported by the package, imports nothing of the production decoder,
 * and decodes zstd with the other binding, `@mongodb-js/zstd`). Rebuilds the whole journal.
 */
import { decompress } from "@mongodb-js/zstd";

async function unzstd(b: Buffer): Promise<Buffer> {
  return b.length === 0 ? Buffer.alloc(0) : Buffer.from(await decompress(b));
}

function list(b: Buffer): string[] {
  if (b.length === 0) return [];
  const v = b.toString("utf8").split("\n");
  if (v.pop() !== "") throw new Error("list stream does not end with a newline");
  return v;
}

const num = (b: Buffer, at: number) => Number(b.readBigUInt64LE(at));

/** Rebuild the original journal from a container and the manifest's `lines`/`endsWithNewline` (line numbers stored verbatim go to `verbatimLines`). */
export async function independentDecode(c: Buffer, manifest: { ext: { lines: number; endsWithNewline: boolean } }, verbatimLines: number[] = []): Promise<Buffer> {
  const version = c.readUInt32LE(4);
  if (c.readUInt32LE(0) !== 0x44585748 || ![1, 2, 3].includes(version)) throw new Error("header");
  // Version 2 and 3: stream 9 is SNAP, columns start at 10.
  const firstCol = version >= 2 ? 10 : 9;
  const f = c.subarray(c.length - 32);
  if (f.readUInt32LE(28) !== 0x46585748 || f.readUInt32LE(24) !== version) throw new Error("footer");
  const packTable = num(f, 0);
  const blockTable = num(f, 8);
  const nFrames = f.readUInt32LE(16);
  const nBlocks = f.readUInt32LE(20);
  if (packTable + 24 * nFrames !== blockTable || blockTable + 40 * nBlocks + 32 !== c.length) throw new Error("tables");
  // The pack: all pieces, in id order.
  const pieces: string[] = [];
  for (let k = 0; k < nFrames; k++) {
    const e = packTable + 24 * k;
    const off = num(c, e);
    const z = c.readUInt32LE(e + 8);
    const raw = c.readUInt32LE(e + 12);
    if (c.readUInt32LE(e + 16) !== pieces.length) throw new Error("frame firstPiece");
    const data = await unzstd(c.subarray(off, off + z));
    if (data.length !== raw) throw new Error("frame size");
    const ps = list(data);
    if (ps.length !== c.readUInt32LE(e + 20)) throw new Error("frame pieces");
    pieces.push(...ps);
  }
  const out: Buffer[] = [];
  let lineNo = 0;
  for (let k = 0; k < nBlocks; k++) {
    const e = blockTable + 40 * k;
    const rec = c.subarray(num(c, e), num(c, e) + c.readUInt32LE(e + 8));
    const lines = c.readUInt32LE(e + 12);
    if (num(c, e + 16) !== lineNo) throw new Error("block firstLine");
    if (rec.readUInt32LE(0) !== 0x42585748) throw new Error("block magic");
    const S = rec.readUInt32LE(4);
    const streams: Buffer[] = [];
    let at = 8 + 8 * S;
    for (let s = 0; s < S; s++) {
      const z = rec.readUInt32LE(8 + 8 * s);
      const d = await unzstd(rec.subarray(at, at + z));
      if (d.length !== rec.readUInt32LE(12 + 8 * s)) throw new Error("stream size");
      streams.push(d);
      at += z;
    }
    // Version 3: META is a list (names, then one shape per line); before, one JSON object.
    const meta = version >= 3
      ? ((ls) => ({ cols: JSON.parse(ls[0]) as string[], shapes: ls.slice(1).map((x) => JSON.parse(x) as [string, number[]]) }))(list(streams[0]))
      : (JSON.parse(streams[0].toString("utf8")) as { cols: string[]; shapes: [string, number[]][] });
    const rows = list(streams[1]).map(Number);
    const lens = list(streams[2]).map(Number);
    const verbatim = streams[3];
    const idMs = list(streams[4]);
    const idRand = list(streams[5]);
    const ts = list(streams[6]);
    const text = list(streams[7]);
    const textn = list(streams[8]);
    if (S !== firstCol + meta.cols.length) throw new Error("stream count");
    const cols = meta.cols.map((_, i) => list(streams[firstCol + i]));
    // Snapshots (version 2 and 3): before every 128th line, the deltas of T, prevRef and the byte
    // positions of VERBATIM, ID_MS, ID_RAND, TS, TEXT, TEXTN, (version 3: ROWS, LINELEN, the
    // line's offset in the block,) then each column. Version 2: one value per list entry,
    // snapshot after snapshot; version 3: line v = value v of every snapshot, comma separated.
    const nSnaps = Math.floor((lines - 1) / 128);
    const fixed = version >= 3 ? 11 : 8;
    const per = fixed + meta.cols.length;
    let snap: number[] = [];
    if (version === 2) snap = list(streams[9]).map(Number);
    else if (version === 3 && nSnaps > 0) {
      const byValue = list(streams[9]).map((x) => x.split(",").map(Number));
      if (byValue.length !== per || byValue.some((x) => x.length !== nSnaps)) throw new Error("snapshot count");
      for (let j = 0; j < nSnaps; j++) for (let v = 0; v < per; v++) snap.push(byValue[v][j]);
    }
    if (version >= 2 && snap.length !== nSnaps * per) throw new Error("snapshot count");
    const rowBytes = list(streams[1]);
    const lenBytes = list(streams[2]);
    const snapState = new Array<number>(per).fill(0);
    snapState[1] = -1;
    const bytesOf = (vals: string[], n: number) => vals.slice(0, n).reduce((a, x) => a + Buffer.byteLength(x) + 1, 0);
    const colPos = cols.map(() => 0);
    let T = 0;
    let v = 0;
    let iId = 0;
    let iTs = 0;
    let iText = 0;
    let iTextN = 0;
    let prev = -1;
    for (let i = 0; i < lines; i++, lineNo++) {
      if (version >= 2 && i > 0 && i % 128 === 0) {
        const j = i / 128 - 1;
        for (let v = 0; v < per; v++) snapState[v] += snap[j * per + v];
        const rowsEtc = version >= 3 ? [bytesOf(rowBytes, i), bytesOf(lenBytes, i), lens.slice(0, i).reduce((a, x) => a + x + 1, 0)] : [];
        const mine = [T, prev, v, bytesOf(idMs, iId), bytesOf(idRand, iId), bytesOf(ts, iTs), bytesOf(text, iText), bytesOf(textn, iTextN),
          ...rowsEtc, ...cols.map((col, ci) => bytesOf(col, colPos[ci]))];
        if (mine.some((x, k) => x !== snapState[k])) throw new Error(`snapshot at line ${lineNo}`);
      }
      let line: Buffer;
      if (rows[i] === 0) {
        const nl = verbatim.indexOf(10, v);
        line = verbatim.subarray(v, nl);
        v = nl + 1;
        verbatimLines.push(lineNo);
      } else {
        const [tpl, shapeCols] = meta.shapes[rows[i] - 1];
        let s = "";
        let ci = 0;
        for (const ch of tpl) {
          const code = ch.charCodeAt(0);
          if (code > 5 || code === 0) {
            s += ch;
            continue;
          }
          if (code === 1 || code === 2) {
            const col = shapeCols[ci++];
            const val = cols[col][colPos[col]++];
            s += code === 1 ? `"${val}"` : val;
          } else if (code === 3) {
            T += Number(idMs[iId]);
            s += `"${T}-${idRand[iId++]}"`;
          } else if (code === 4) {
            s += `"${new Date(T + Number(ts[iTs++])).toISOString()}"`;
          } else {
            const n = Number(textn[iTextN++]);
            const parts: string[] = [];
            for (let j = 0; j < n; j++) {
              const tok = text[iText++];
              if (tok.startsWith("'")) parts.push(tok.slice(1));
              else {
                prev = prev + 1 + Number(tok);
                parts.push(pieces[prev]);
              }
            }
            s += `"${parts.join("\\n")}"`;
          }
        }
        line = Buffer.from(s, "utf8");
      }
      if (line.length !== lens[i]) throw new Error(`line ${lineNo} length`);
      out.push(line);
      const last = lineNo === manifest.ext.lines - 1;
      if (!last || manifest.ext.endsWithNewline) out.push(Buffer.from("\n"));
    }
  }
  if (lineNo !== manifest.ext.lines) throw new Error("line count");
  return Buffer.concat(out);
}
