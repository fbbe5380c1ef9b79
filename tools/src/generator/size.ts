/** Parsing of human sizes for the generator and the bench (`100MB`, `1GB`, `512KiB`, `2e6`). */

const UNITS: Record<string, number> = {
  "": 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, k: 1e3, m: 1e6, g: 1e9,
};

/**
 * Bytes for a size string: decimal units (KB = 1000) and binary ones (KiB = 1024).
 * Returns null when the text is not a size.
 * @example parseSize("100MB") // 100_000_000
 */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!m) return null;
  const unit = UNITS[m[2].toLowerCase()];
  if (unit === undefined) return null;
  const v = Math.round(Number(m[1]) * unit);
  return Number.isFinite(v) && v > 0 ? v : null;
}

/** `1.5 GB`, `100.0 MB`, `12.3 KB`, `512 B` (decimal units). */
export function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} KB`;
  return `${n} B`;
}
