/**
 * The extended diet's whole-block rebuild in WebAssembly (`rebuild.wat`): the loop of
 * `rebuildLines` (block-codec.ts) with 16-byte copies and newline scans. A fast path only: it
 * answers -1 wherever the JavaScript decoder would throw (or for what it leaves to it), and the
 * caller then runs the JavaScript decoder, which gives the bytes or the error.
 *
 * `REBUILD_WASM_BASE64` is written by `node tools/build-wasm.mjs rebuild` from the .wat (wabt, a
 * devDependency: nothing assembles at run time); a test checks the two agree.
 */

/** The assembled rebuild.wat (written by tools/build-wasm.mjs). */
export const REBUILD_WASM_BASE64 =
  "AGFzbQEAAAABIAVgAX8Bf2AEf39/fwF/YAN/f38AYAJ/fwF+YAJ/fgF/Ag0BA2VudgVwaWVjZQAAAwsKAAECAQMCAAQEAAUGAQMBgIAEBjMKfwFBAAt/AUEBC38BQQALfwFBAAt/AUEAC38BQQALfwFBAAt/AUEAC38BQQALfwFBAAsHGgMDbWVtAgAGc3RhcnRzAAIHcmVidWlsZAAKCvwWCoECAgV/AXwgACMFSSAAIwZPcgRAAkAjBEUNACAAIwMjBEECdGooAgBPDQAjBEEBayECAkADQCABIAJPDQEgASACakEBakEBdiEDIwMgA0ECdGooAgAgAE0EQCADIQEFIANBAWshAgsMAAsLIwIgAUEEdGohBCAEKAIARQ0AIwMgAUECdGooAgAkBSMDIAFBAnRqKAIEJAYgBCgCACQHIAQoAgQkCEEIKwMARAAAAAAAAPA/oCEGQQggBjkDACAEIAY5AwgMAQtBACQFQQAkBiAAEAAhBUEEKAIAJAkgBQ8LIwggACMFa0ECdGohBSMHIAUoAgRqQQFrJAkjByAFKAIAagugAQEDfyACQQA2AgACQANAIAQgAU8NASAAIARq/QAEAEEK/Q/9I/1kIQUgASAEa0EQSQRAIAVBASABIARrdEEBa3EhBQsCQANAIAVFDQEgBkEBaiEGIAYgA0sEQEEADwsgAiAGQQJ0aiAEIAVoakEBajYCACAFIAVBAWtxIQUMAAsLIARBEGohBAwACwsgBiADRiACIANBAnRqKAIAIAFGcQtQAQF/IAFBEE0EQCACIAD9AAQA/QsEAA8LIAFBgAJLBEAgAiAAIAH8CgAADwsDQCACIANqIAAgA2r9AAQA/QsEACADQRBqIQMgAyABSQ0ACwttAgF7AX8DQCAAIAFPBEBBfw8LIAD9AAQAIQQgAiAE/QsEACAEQQr9D/0j/WQhBSAFBEAgBWghBSAAIAVqIQAgACABTwRAQX8PCyAAJAAgAiAFag8LIABBEGohACACQRBqIQIgAiADTQ0AC0F/C6sBAwF/AX4Cf0EAJAEgACABTwRAQgAPCyAALQAAQS1GBEBBASECIABBAWohAAsgACEFAkADQCAAIAFPBEBCAA8LIAAtAAAhBCAEQQpGDQEgBEEwayEEIARBCUsEQEIADwsgA0IKfiAErXwhAyADQv////////8PVgRAQgAPCyAAQQFqIQAMAAsLIAAgBUYEQEIADwsgAEEBaiQAQQEkASACBH5CACADfQUgAwsLJwADQCACQQFrIQIgACACakEwIAFBCnBqOgAAIAFBCm4hASACDQALCycBAX9BASEBAkADQCAAQQpJDQEgAEEKbiEAIAFBAWohAQwACwsgAQtZAQN/IAFCgMLXL1QEQCABpyEDIAMQByEEIAAgAyAEEAYgBA8LIAFCgMLXL4CnIQIgAUKAwtcvgqchAyACEAchBCAAIAIgBBAGIAAgBGogA0EIEAYgBEEIaguAAwELfyABQgBTIAFCgLj/kP3OOVlyBEBBAA8LIAFCgLiZKYCnIQIgAUKAuJkpgqchAyACQez0K2ohBCAEQbH1CG4hBSAEIAVBsfUIbGshBiAGIAZBtAtuayAGQaydAm5qIAZBsPUIbmtB7QJuIQcgByAFQZADbGohCCAGIAdB7QJsIAdBBG5qIAdB5ABua2shCSAJQQVsQQJqQZkBbiEKIAkgCkGZAWxBAmpBBW5rQQFqIQwgCkEKSQR/IApBA2oFIApBCWsLIQsgC0ECTQRAIAhBAWohCAsgAEEiOgAAIABBAWogCEEEEAYgAEEtOgAFIABBBmogC0ECEAYgAEEtOgAIIABBCWogDEECEAYgAEHUADoACyAAQQxqIANBgN3bAW5BAhAGIABBOjoADiAAQQ9qIANB4NQDbkE8cEECEAYgAEE6OgARIABBEmogA0HoB25BPHBBAhAGIABBLjoAFCAAQRVqIANB6AdwQQMQBiAAQdoAOgAYIABBIjoAGUEaC7wMBRp/A34RfwJ+Bn8gACgCACEBIAAoAgQhAiAAKAIIIQMgACgCDCEEIAAoAhAhBSAAKAIUIQYgACgCGCEHIAAoAhwhCCAAKAIgIQkgACgCJCEKIAAoAighCyAAKAIsIQwgACgCMCENIAAoAjQhDiAAKAI4IQ8gACgCPCEQIAAoAkAhESAAKAJEIRIgACgCSCETIAAoAkwhFCAAKAJQIRUgACgCVCEWIAAoAlghFyAAKAJcIRggACgCYCEZIAAoAmQhGiAAKAJoIR4gACgCbCE0IAAoAnAhNSAAKQN4IRsgACkDgAEhHCAeITYgACgCoAEkAiAAKAKkASQDIAAoAqgBJARBACQFQQAkBiADIR8CQAJAA0AgHiABTw0BIB5BAEcgHkH/AHFFcQRAIBkgHkEHdkEBayAWQQhqQQN0bGohMyAzIBu5OQMAIDMgHLk5AwggMyAHIAAoAogBa7g5AxAgMyAJIAAoAowBa7g5AxggMyALIAAoApABa7g5AyAgMyANIAAoApQBa7g5AyggMyAPIAAoApgBa7g5AzAgMyARIAAoApwBa7g5AzhBACEsAkADQCAsIBZPDQEgMyAsQQN0aiAVICxBAnRqKAIAIBMgLEECdGooAgBruDkDQCAsQQFqISwMAAsLCyAEIB5BAnRqKAIAISIgBSAeQQJ0aigCACEjIB8hICAgIANrIDRqICNqIAJLDQIgHiA2SyAgIANrICNqQQFqIDVLcQ0BICAgI2ohISAiRQRAIAcgCCAfICEQBCEyIDIgIUcNAyAhIR8jAEEBaiEHBSAGICJBAWtBFGxqITMgMygCACEkIDMoAgQhJSAzKAIIISYgMygCDCEnIDMoAhAhKCAkRQ0DICUoAgAhLSAlKAIEIC1rIS4gHyAuaiAhSw0DICQgLWogLiAfEAMgHyAuaiEfQQAhKUEAISoCQANAICkgJ08NASAmIClqLQAAISsCQCArQQJNBEAgKCAqQQJ0aigCAEECdCEsICpBAWohKiArQQFGITIgMgRAIB9BIjoAACAfQQFqIR8LIBUgLGooAgAgFCAsaigCACAfICEQBCEfIB9BAEgNByAyBEAgH0EiOgAAIB9BAWohHwsgHyAhSw0HIBUgLGojAEEBajYCAAwBCyArQQNGBEAgCSAKTw0HIAkgChAFIR0jAUUNByMAIQkgGyAdfCEbIBtC/////////w9WDQcgH0EiOgAAIB9BAWohHyAfIB8gGxAIaiEfIB9BLToAACAfQQFqIR8gHyAhQQFqSw0HIAsgDCAfICEQBCEfIB9BAEgNByAfQSI6AAAgH0EBaiEfIB8gIUsNByMAQQFqIQsMAQsgK0EERgRAIA0gDk8NByANIA4QBSEdIwFFDQcjACENIBsgHXwhHSAfIB0QCUUNByAfQRpqIR8gHyAhSw0HDAELICtBBUcNBiARIBJPDQYgESASEAUhLyMBRQ0GIwAhESAvQgFTDQYgHyAhTw0GIB9BIjoAACAfQQFqIR9CACEwA0AgMEIAUgRAIB9BAmogIUsNCCAfQdzcATsBACAfQQJqIR8LIA8gEE8NByAPLQAAQSdGBEAgD0EBaiAQIB8gIRAEIR8gH0EASA0IIB8gIUsNCCMAITEFIA8gEBAFIR0jAUUNCCMAQQFrITEgHEIBfCAdfCEdIB1C/////wdWDQggHSEcIB2nEAEhLSAtQQBIDQgjCSAtayEuIB8gLmogIUsNCCAtIC4gHxADIB8gLmohHwsgMUEBaiEPIDBCAXwhMCAwIC9UDQALIB8gIU8NBiAfQSI6AAAgH0EBaiEfCyAlIClBA3RqITMgMygCCCEtIDMoAgwgLWshLiAfIC5qICFLDQUgJCAtaiAuIB8QAyAfIC5qIR8gKUEBaiEpDAALCyAfICFHDQMLIBcgHkECdGogICADayA0ajYCACAYIB5BAnRqIB8gA2sgNGo2AgAgHiABQQFrSSAaRXIEQCAfQQo6AAAgH0EBaiEfCyAeQQFqIR4MAAsLIAAgBzYCGCAAIAk2AiAgACALNgIoIAAgDTYCMCAAIA82AjggACARNgJAIAAgHjYCaCAAIDQgHyADa2o2AmwgACAbNwN4IAAgHDcDgAEgHyADaw8LQX8L";

/** Pack piece `id`: the address of its bytes in the module's memory (their end stored as an i32 at address 4), or -1 when they are not there. */
export type PieceAt = (id: number) => number;

/**
 * One module instance (its own memory, for one thread), with an allocator for that memory. The
 * memory is shared (a SharedArrayBuffer): a view of it can be posted to another thread without a
 * copy, and one taken before the memory grew stays valid (over the length it had then).
 */
export interface WasmRebuilder {
  /** Views of the whole memory, replaced when it grows (take them again after alloc or rebuild to see all of it). */
  readonly u8: Uint8Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly buf: Buffer;
  /** `bytes` of the memory (16-aligned, uninitialised) until `free`; may grow the memory. */
  alloc(bytes: number): number;
  free(addr: number): void;
  /** Run the job laid out at `p`, finding pieces with `piece`; the bytes written or -1. */
  rebuild(p: number, piece: PieceAt): number;
  /** A pack frame's piece starts (`len` bytes at `a`, `n` pieces) into i32s at `out`; false when it does not hold exactly `n`. */
  starts(a: number, len: number, out: number, n: number): boolean;
}

/** The part of the WebAssembly JS API used here (the project's `lib` has no WebAssembly declarations). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: { mem: WasmMemory; rebuild: (p: number) => number; starts: (a: number, len: number, out: number, n: number) => number } };
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** Below this address: the import's answer slot (4) and the frames' use clock (f64 at 8). */
const HEAP_START = 1024;

/** A new instance for this thread; throws where WebAssembly (or its SIMD) is unavailable. */
export function createWasmRebuilder(base64: string = REBUILD_WASM_BASE64): WasmRebuilder {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) throw new Error("WebAssembly is unavailable");
  let current: PieceAt = () => -1;
  const { mem, rebuild, starts } = new api.Instance(new api.Module(Buffer.from(base64, "base64")), {
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
    starts(a: number, len: number, out: number, n: number): boolean {
      return starts(a, len, out, n) === 1;
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
