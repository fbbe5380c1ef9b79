/**
 * The extended diet's text encoding written over strings, as format 3 defines it: the tests'
 * oracle for the writer, which works on the text values' UTF-8 bytes (`textStreamsOf`,
 * `longPiecesOf` in block-codec.ts) and must give the same bytes. Not part of the build.
 */
import { BLOCK_MAGIC, PIECE_MIN_CHARS } from "./format.js";
import { joined, longPiecesOf, unpackRecord, type LongPieces, type TextStreams } from "./block-codec.js";
import { zstdCompress } from "./zstd.js";

/** The pack's side of text encoding: piece ids for pieces worth storing once. */
export interface PieceStore {
  /** The id of `piece`, adding it (to the pack being written) when new. */
  idOf(piece: string): number;
}

/**
 * Encode a block's text values against the pack: each value is split at its escaped newlines
 * (the two characters `\` `n`; split and joined with the same separator, so exact whatever they
 * mean); pieces of PIECE_MIN_CHARS or more become references, shorter ones stay inline.
 * TEXT gets one token per piece (`'` + the piece, or the id as a signed delta from the previous
 * reference + 1), TEXTN the number of pieces per value.
 */
export function textStreams(texts: string[], store: PieceStore, snapTexts: number[] = [], split?: string[][]): TextStreams {
  const tokens: string[] = [];
  const counts: string[] = new Array(texts.length);
  const snapText: number[] = [];
  const snapTextN: number[] = [];
  const snapPrev: number[] = [];
  let prev = -1;
  let refs = 0;
  let textBytes = 0;
  let textnBytes = 0;
  let sj = 0;
  for (let i = 0; i <= texts.length; i++) {
    while (sj < snapTexts.length && snapTexts[sj] === i) {
      snapText.push(textBytes);
      snapTextN.push(textnBytes);
      snapPrev.push(prev);
      sj++;
    }
    if (i === texts.length) break;
    const pieces = split?.[i] ?? texts[i].split("\\n");
    counts[i] = String(pieces.length);
    textnBytes += counts[i].length + 1;
    for (const p of pieces) {
      if (p.length < PIECE_MIN_CHARS) {
        tokens.push(`'${p}`);
        textBytes += Buffer.byteLength(p) + 2;
      } else {
        const id = store.idOf(p);
        const tok = String(id - prev - 1);
        tokens.push(tok);
        textBytes += tok.length + 1;
        prev = id;
        refs++;
      }
    }
  }
  return { text: joined(tokens), textn: joined(counts), refs, snapText, snapTextN, snapPrev };
}

/** `longPiecesOf` of the texts written as UTF-8, one write per text value. */
export function longPieces(texts: string[], seed: number): LongPieces {
  let chars = 0;
  for (const t of texts) chars += t.length;
  // At most 3 UTF-8 bytes per UTF-16 unit (untouched pages cost nothing).
  const bytes = chars === 0 ? Buffer.alloc(0) : Buffer.allocUnsafeSlow(3 * chars);
  const ends: number[] = [];
  let at = 0;
  for (const t of texts) ends.push((at += bytes.write(t, at, "utf8")));
  return longPiecesOf(bytes.subarray(0, at), ends, seed);
}

/**
 * A block record with stream `s` replaced by `edit(its decoded bytes)` and every stream compressed
 * again (level 1), the record's header written to match: a damaged or edited block as a writer
 * would have sealed it, for the decoder's bad-input tests.
 */
export function repackRecord(rec: Buffer, s: number, edit: (b: Buffer) => Buffer): Buffer {
  const streams = unpackRecord(rec) as Buffer[];
  streams[s] = edit(Buffer.from(streams[s]));
  const z = streams.map((b) => (b.length === 0 ? Buffer.alloc(0) : zstdCompress(b, 1)));
  const head = Buffer.alloc(8 + 8 * z.length);
  head.writeUInt32LE(BLOCK_MAGIC, 0);
  head.writeUInt32LE(z.length, 4);
  z.forEach((b, k) => {
    head.writeUInt32LE(b.length, 8 + 8 * k);
    head.writeUInt32LE(streams[k].length, 12 + 8 * k);
  });
  return Buffer.concat([head, ...z]);
}
