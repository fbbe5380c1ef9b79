/**
 * "Did you mean …?" for a mistyped command or flag, as git and cargo do: the closest candidate
 * within a small edit distance (Damerau–Levenshtein, adjacent swaps count 1), or a unique prefix.
 *
 * @example suggest("stast", ["stats", "state"]) // "stats"
 */

/** Edit distance between `a` and `b` (insert, delete, substitute, swap adjacent: 1 each). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `input` (distance ≤ 2, or ≤ 1 for inputs of 3 characters or fewer; else a unique prefix match); null when none is close. */
export function suggest(input: string, candidates: readonly string[]): string | null {
  const limit = input.length <= 3 ? 1 : 2;
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const dist = editDistance(input, c);
    if (dist < bestD) {
      best = c;
      bestD = dist;
    }
  }
  if (best !== null && bestD <= limit) return best;
  const prefixed = candidates.filter((c) => c.startsWith(input) && input.length >= 2);
  return prefixed.length === 1 ? prefixed[0]! : null;
}
