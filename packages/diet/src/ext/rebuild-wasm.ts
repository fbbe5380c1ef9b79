/**
 * The extended diet's whole-block rebuild in WebAssembly (`rebuild.wat`): the loop of
 * `rebuildLines` (block-codec.ts) with 16-byte copies and newline scans. A fast path only: it
 * answers -1 wherever the JavaScript decoder would throw (or for what it leaves to it), and the
 * caller then runs the JavaScript decoder, which gives the bytes or the error.
 *
 * `REBUILD_WASM_BASE64` is written by `node tools/build-rebuild-wasm.mjs` from the .wat (wabt, a
 * devDependency: nothing assembles at run time); a test checks the two agree.
 */

/** The assembled rebuild.wat (written by tools/build-rebuild-wasm.mjs). */
export const REBUILD_WASM_BASE64 =
  "AGFzbQEAAAABIAVgAX8Bf2ADf39/AGAEf39/fwF/YAJ/fwF+YAJ/fgF/Ag0BA2VudgVwaWVjZQAAAwkIAQIDAQAEBAAFAwEAAQYLAn8BQQALfwFBAQsHEQIDbWVtAgAHcmVidWlsZAAICroTCFABAX8gAUEQTQRAIAIgAP0ABAD9CwQADwsgAUGAAksEQCACIAAgAfwKAAAPCwNAIAIgA2ogACADav0ABAD9CwQAIANBEGohAyADIAFJDQALC20CAXsBfwNAIAAgAU8EQEF/DwsgAP0ABAAhBCACIAT9CwQAIARBCv0P/SP9ZCEFIAUEQCAFaCEFIAAgBWohACAAIAFPBEBBfw8LIAAkACACIAVqDwsgAEEQaiEAIAJBEGohAiACIANNDQALQX8LqwEDAX8BfgJ/QQAkASAAIAFPBEBCAA8LIAAtAABBLUYEQEEBIQIgAEEBaiEACyAAIQUCQANAIAAgAU8EQEIADwsgAC0AACEEIARBCkYNASAEQTBrIQQgBEEJSwRAQgAPCyADQgp+IAStfCEDIANC/////////w9WBEBCAA8LIABBAWohAAwACwsgACAFRgRAQgAPCyAAQQFqJABBASQBIAIEfkIAIAN9BSADCwsnAANAIAJBAWshAiAAIAJqQTAgAUEKcGo6AAAgAUEKbiEBIAINAAsLJwEBf0EBIQECQANAIABBCkkNASAAQQpuIQAgAUEBaiEBDAALCyABC1kBA38gAUKAwtcvVARAIAGnIQMgAxAFIQQgACADIAQQBCAEDwsgAUKAwtcvgKchAiABQoDC1y+CpyEDIAIQBSEEIAAgAiAEEAQgACAEaiADQQgQBCAEQQhqC4ADAQt/IAFCAFMgAUKAuP+Q/c45WXIEQEEADwsgAUKAuJkpgKchAiABQoC4mSmCpyEDIAJB7PQraiEEIARBsfUIbiEFIAQgBUGx9QhsayEGIAYgBkG0C25rIAZBrJ0CbmogBkGw9Qhua0HtAm4hByAHIAVBkANsaiEIIAYgB0HtAmwgB0EEbmogB0HkAG5rayEJIAlBBWxBAmpBmQFuIQogCSAKQZkBbEECakEFbmtBAWohDCAKQQpJBH8gCkEDagUgCkEJawshCyALQQJNBEAgCEEBaiEICyAAQSI6AAAgAEEBaiAIQQQQBCAAQS06AAUgAEEGaiALQQIQBCAAQS06AAggAEEJaiAMQQIQBCAAQdQAOgALIABBDGogA0GA3dsBbkECEAQgAEE6OgAOIABBD2ogA0Hg1ANuQTxwQQIQBCAAQTo6ABEgAEESaiADQegHbkE8cEECEAQgAEEuOgAUIABBFWogA0HoB3BBAxAEIABB2gA6ABggAEEiOgAZQRoLnwwFGn8DfhF/An4GfyAAKAIAIQEgACgCBCECIAAoAgghAyAAKAIMIQQgACgCECEFIAAoAhQhBiAAKAIYIQcgACgCHCEIIAAoAiAhCSAAKAIkIQogACgCKCELIAAoAiwhDCAAKAIwIQ0gACgCNCEOIAAoAjghDyAAKAI8IRAgACgCQCERIAAoAkQhEiAAKAJIIRMgACgCTCEUIAAoAlAhFSAAKAJUIRYgACgCWCEXIAAoAlwhGCAAKAJgIRkgACgCZCEaIAAoAmghHiAAKAJsITQgACgCcCE1IAApA3ghGyAAKQOAASEcIB4hNiADIR8CQAJAA0AgHiABTw0BIB5BAEcgHkH/AHFFcQRAIBkgHkEHdkEBayAWQQhqQQN0bGohMyAzIBu5OQMAIDMgHLk5AwggMyAHIAAoAogBa7g5AxAgMyAJIAAoAowBa7g5AxggMyALIAAoApABa7g5AyAgMyANIAAoApQBa7g5AyggMyAPIAAoApgBa7g5AzAgMyARIAAoApwBa7g5AzhBACEsAkADQCAsIBZPDQEgMyAsQQN0aiAVICxBAnRqKAIAIBMgLEECdGooAgBruDkDQCAsQQFqISwMAAsLCyAEIB5BAnRqKAIAISIgBSAeQQJ0aigCACEjIB8hICAgIANrIDRqICNqIAJLDQIgHiA2SyAgIANrICNqQQFqIDVLcQ0BICAgI2ohISAiRQRAIAcgCCAfICEQAiEyIDIgIUcNAyAhIR8jAEEBaiEHBSAGICJBAWtBFGxqITMgMygCACEkIDMoAgQhJSAzKAIIISYgMygCDCEnIDMoAhAhKCAkRQ0DICUoAgAhLSAlKAIEIC1rIS4gHyAuaiAhSw0DICQgLWogLiAfEAEgHyAuaiEfQQAhKUEAISoCQANAICkgJ08NASAmIClqLQAAISsCQCArQQJNBEAgKCAqQQJ0aigCAEECdCEsICpBAWohKiArQQFGITIgMgRAIB9BIjoAACAfQQFqIR8LIBUgLGooAgAgFCAsaigCACAfICEQAiEfIB9BAEgNByAyBEAgH0EiOgAAIB9BAWohHwsgHyAhSw0HIBUgLGojAEEBajYCAAwBCyArQQNGBEAgCSAKTw0HIAkgChADIR0jAUUNByMAIQkgGyAdfCEbIBtC/////////w9WDQcgH0EiOgAAIB9BAWohHyAfIB8gGxAGaiEfIB9BLToAACAfQQFqIR8gHyAhQQFqSw0HIAsgDCAfICEQAiEfIB9BAEgNByAfQSI6AAAgH0EBaiEfIB8gIUsNByMAQQFqIQsMAQsgK0EERgRAIA0gDk8NByANIA4QAyEdIwFFDQcjACENIBsgHXwhHSAfIB0QB0UNByAfQRpqIR8gHyAhSw0HDAELICtBBUcNBiARIBJPDQYgESASEAMhLyMBRQ0GIwAhESAvQgFTDQYgHyAhTw0GIB9BIjoAACAfQQFqIR9CACEwA0AgMEIAUgRAIB9BAmogIUsNCCAfQdzcATsBACAfQQJqIR8LIA8gEE8NByAPLQAAQSdGBEAgD0EBaiAQIB8gIRACIR8gH0EASA0IIB8gIUsNCCMAITEFIA8gEBADIR0jAUUNCCMAQQFrITEgHEIBfCAdfCEdIB1C/////wdWDQggHSEcIB2nEAAhLSAtQQBIDQhBBCgCACAtayEuIB8gLmogIUsNCCAtIC4gHxABIB8gLmohHwsgMUEBaiEPIDBCAXwhMCAwIC9UDQALIB8gIU8NBiAfQSI6AAAgH0EBaiEfCyAlIClBA3RqITMgMygCCCEtIDMoAgwgLWshLiAfIC5qICFLDQUgJCAtaiAuIB8QASAfIC5qIR8gKUEBaiEpDAALCyAfICFHDQMLIBcgHkECdGogICADayA0ajYCACAYIB5BAnRqIB8gA2sgNGo2AgAgHiABQQFrSSAaRXIEQCAfQQo6AAAgH0EBaiEfCyAeQQFqIR4MAAsLIAAgBzYCGCAAIAk2AiAgACALNgIoIAAgDTYCMCAAIA82AjggACARNgJAIAAgHjYCaCAAIDQgHyADa2o2AmwgACAbNwN4IAAgHDcDgAEgHyADaw8LQX8L";

/** Pack piece `id`: the address of its bytes in the module's memory (their end stored as an i32 at address 4), or -1 when they are not there. */
export type PieceAt = (id: number) => number;

/** One module instance (its own memory, for one thread), with an allocator for that memory. */
export interface WasmRebuilder {
  /** Views of the whole memory, replaced when it grows (take them again after alloc or rebuild). */
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly buf: Buffer;
  /** `bytes` of the memory (16-aligned, uninitialised) until `free`; may grow the memory. */
  alloc(bytes: number): number;
  free(addr: number): void;
  /** Run the job laid out at `p`, finding pieces with `piece`; the bytes written or -1. */
  rebuild(p: number, piece: PieceAt): number;
}

/** The part of the WebAssembly JS API used here (the project's `lib` has no WebAssembly declarations). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: { mem: WasmMemory; rebuild: (p: number) => number } };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** Below this address: the import's answer slots. */
const HEAP_START = 1024;

/** A new instance for this thread; throws where WebAssembly (or its SIMD) is unavailable. */
export function createWasmRebuilder(base64: string = REBUILD_WASM_BASE64): WasmRebuilder {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) throw new Error("WebAssembly is unavailable");
  let current: PieceAt = () => -1;
  const { mem, rebuild } = new api.Instance(new api.Module(Buffer.from(base64, "base64")), {
    env: { piece: (id: number) => current(id) },
  }).exports;
  // First fit over address-ordered extents; a freed extent merges with free neighbours, the last one lowers the top.
  const addrs: number[] = [];
  const lens: number[] = [];
  const used: boolean[] = [];
  let top = HEAP_START;
  const views = () => {
    r.u8 = new Uint8Array(mem.buffer);
    r.i32 = new Int32Array(mem.buffer);
    r.f64 = new Float64Array(mem.buffer);
    r.buf = Buffer.from(mem.buffer);
  };
  const r = {
    u8: new Uint8Array(0),
    i32: new Int32Array(0),
    f64: new Float64Array(0),
    buf: Buffer.alloc(0),
    alloc(bytes: number): number {
      const n = Math.max(64, (bytes + 63) & ~63);
      for (let i = 0; i < addrs.length; i++) {
        if (used[i] || lens[i] < n) continue;
        if (lens[i] > n) {
          addrs.splice(i + 1, 0, addrs[i] + n);
          lens.splice(i + 1, 0, lens[i] - n);
          used.splice(i + 1, 0, false);
          lens[i] = n;
        }
        used[i] = true;
        return addrs[i];
      }
      const a = top;
      if (a + n > r.u8.length) {
        mem.grow(Math.ceil((a + n - r.u8.length) / 65536));
        views();
      }
      addrs.push(a);
      lens.push(n);
      used.push(true);
      top = a + n;
      return a;
    },
    free(addr: number): void {
      let i = addrs.indexOf(addr);
      if (i < 0 || !used[i]) return;
      used[i] = false;
      if (i + 1 < addrs.length && !used[i + 1]) {
        lens[i] += lens[i + 1];
        addrs.splice(i + 1, 1);
        lens.splice(i + 1, 1);
        used.splice(i + 1, 1);
      }
      if (i > 0 && !used[i - 1]) {
        lens[i - 1] += lens[i];
        addrs.splice(i, 1);
        lens.splice(i, 1);
        used.splice(i, 1);
        i--;
      }
      if (i === addrs.length - 1) {
        top = addrs[i];
        addrs.pop();
        lens.pop();
        used.pop();
      }
    },
    rebuild(p: number, piece: PieceAt): number {
      current = piece;
      try {
        return rebuild(p);
      } finally {
        current = () => -1;
      }
    },
  };
  views();
  return r;
}

let thread: WasmRebuilder | null | undefined;

/** This thread's rebuilder, made on first use; null where WebAssembly is unavailable (`node --jitless`): the JavaScript decoder does the work. */
export function threadRebuilder(): WasmRebuilder | null {
  if (thread === undefined) {
    try {
      thread = createWasmRebuilder();
    } catch {
      thread = null;
    }
  }
  return thread;
}
