/**
 * Field-level difference of two states (or any JSON values), as paths like
 * `runs[0].codons[3].endTime`. Key order counts, because state.json is compared byte for byte.
 */

/** One differing path and the two values (undefined = absent on that side). */
export interface StateDifference {
  path: string;
  /** `value` (different values), `missing` / `extra` (absent in `actual` / in `expected`), `key-order`. */
  kind: "value" | "missing" | "extra" | "key-order";
  expected?: unknown;
  actual?: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function child(path: string, key: string): string {
  const k = IDENT.test(key) ? key : JSON.stringify(key);
  if (path === "") return IDENT.test(key) ? key : `[${k}]`;
  return IDENT.test(key) ? `${path}.${key}` : `${path}[${k}]`;
}

/**
 * Paths where `actual` differs from `expected`, in document order. Pure; never throws.
 * @example diffStates(fold, saved) // [{path: "runs[0].endTime", kind: "value", ...}]
 */
export function diffStates(expected: unknown, actual: unknown, limit = 10_000): StateDifference[] {
  const out: StateDifference[] = [];
  walk(expected, actual, "", out, limit);
  return out;
}

function walk(e: unknown, a: unknown, path: string, out: StateDifference[], limit: number): void {
  if (out.length >= limit) return;
  if (Object.is(e, a)) return;
  if (Array.isArray(e) && Array.isArray(a)) {
    const n = Math.max(e.length, a.length);
    for (let i = 0; i < n; i++) {
      const p = `${path}[${i}]`;
      if (i >= a.length) out.push({ path: p, kind: "missing", expected: e[i] });
      else if (i >= e.length) out.push({ path: p, kind: "extra", actual: a[i] });
      else walk(e[i], a[i], p, out, limit);
      if (out.length >= limit) return;
    }
    return;
  }
  if (isPlainObject(e) && isPlainObject(a)) {
    const ek = Object.keys(e).filter((k) => e[k] !== undefined);
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const aSet = new Set(ak);
    const eSet = new Set(ek);
    for (const k of ek) {
      if (!aSet.has(k)) out.push({ path: child(path, k), kind: "missing", expected: e[k] });
      else walk(e[k], a[k], child(path, k), out, limit);
      if (out.length >= limit) return;
    }
    for (const k of ak) if (!eSet.has(k)) out.push({ path: child(path, k), kind: "extra", actual: a[k] });
    const common = ek.filter((k) => aSet.has(k));
    const commonA = ak.filter((k) => eSet.has(k));
    if (common.some((k, i) => commonA[i] !== k)) out.push({ path: path === "" ? "(root)" : path, kind: "key-order", expected: ek, actual: ak });
    return;
  }
  out.push({ path: path === "" ? "(root)" : path, kind: "value", expected: e, actual: a });
}
