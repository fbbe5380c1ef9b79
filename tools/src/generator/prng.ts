/**
 * A seeded pseudo-random generator (mulberry32) and the draws the generator needs. Never
 * `Math.random`: the same seed gives the same sequence on every machine and Node version.
 */

/** A deterministic random source with convenience draws. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** Log-normal draw: `exp(mu + sigma·N(0,1))`, rounded, clamped to [min, max]. Heavy-tailed sizes. */
  logNormal(median: number, sigma: number, min: number, max: number): number;
  /** `n` lowercase hex characters. */
  hex(n: number): string;
  /** `n` base-36 characters. */
  base36(n: number): string;
  /** A v4-shaped UUID string. */
  uuid(): string;
  /** An independent generator derived from this one (for sub-streams that must not shift others). */
  fork(): Rng;
}

/** mulberry32 state step: 32-bit, period 2^32, fast and good enough for synthetic data. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = "0123456789abcdef";
const B36 = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * A seeded Rng. Guarantees: same seed → same draws; no global state.
 * @example const r = createRng(1); r.int(1, 6);
 */
export function createRng(seed: number): Rng {
  const next = mulberry32(seed);
  let spare: number | null = null;
  const gauss = (): number => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
  const chars = (alphabet: string, n: number): string => {
    let s = "";
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)];
    return s;
  };
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
    logNormal: (median, sigma, min, max) => {
      const v = Math.round(median * Math.exp(sigma * gauss()));
      return Math.max(min, Math.min(max, v));
    },
    hex: (n) => chars(HEX, n),
    base36: (n) => chars(B36, n),
    uuid: () => {
      const h = chars(HEX, 32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[Math.floor(next() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
    fork: () => createRng(Math.floor(next() * 4294967296)),
  };
  return rng;
}
