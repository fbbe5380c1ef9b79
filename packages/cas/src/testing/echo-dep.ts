/** A typed helper module imported by the echo worker (proves relative `.js` imports resolve to `.ts` from the sources). */
export function describeRun(input: { n: number }): { doubled: number } {
  return { doubled: input.n * 2 };
}
