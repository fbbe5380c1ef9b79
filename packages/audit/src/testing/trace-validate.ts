/**
 * A checker of the Chrome Trace Event Format (the JSON Object Format), for tests: required fields
 * per phase, balanced B/E pairs, complete (X) slices that nest properly on their thread, and
 * timestamps that never decrease along a track (pid+tid for slices and instants, pid+name for
 * counters). Returns the problems found (empty = valid). Not exported from the package index.
 */

const PHASES = new Set(["B", "E", "X", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D"]);
const METADATA = new Set(["process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"]);

/** Problems of a parsed trace file (empty when it is valid). */
export function validateTrace(trace: unknown): string[] {
  const out: string[] = [];
  if (typeof trace !== "object" || trace === null || !Array.isArray((trace as { traceEvents?: unknown }).traceEvents)) {
    return ["not an object with a traceEvents array"];
  }
  const events = (trace as { traceEvents: Record<string, unknown>[] }).traceEvents;
  const lastTs = new Map<string, number>();
  const open = new Map<string, number[]>();
  const slices = new Map<string, { s: number; e: number }[]>();
  events.forEach((e, i) => {
    const at = `event ${i} (${JSON.stringify(e).slice(0, 80)})`;
    if (typeof e !== "object" || e === null) return void out.push(`${at}: not an object`);
    const ph = e.ph;
    if (typeof ph !== "string" || !PHASES.has(ph)) return void out.push(`${at}: bad ph`);
    if (typeof e.name !== "string") out.push(`${at}: name must be a string`);
    if (!Number.isInteger(e.pid)) out.push(`${at}: pid must be an integer`);
    if (ph === "M") {
      if (!METADATA.has(e.name as string)) out.push(`${at}: unknown metadata name`);
      if (typeof e.args !== "object" || e.args === null) out.push(`${at}: metadata needs args`);
      return;
    }
    if (!Number.isInteger(e.tid)) out.push(`${at}: tid must be an integer`);
    if (typeof e.ts !== "number" || !Number.isFinite(e.ts) || e.ts < 0) return void out.push(`${at}: ts must be a finite non-negative number`);
    const ts = e.ts;
    const track = ph === "C" ? `C ${e.pid} ${e.name}` : `T ${e.pid} ${e.tid}`;
    const prev = lastTs.get(track);
    if (prev !== undefined && ts < prev) out.push(`${at}: ts ${ts} goes back from ${prev} on track ${track}`);
    lastTs.set(track, ts);
    const thread = `${e.pid} ${e.tid}`;
    switch (ph) {
      case "X": {
        if (typeof e.dur !== "number" || !(e.dur >= 0)) out.push(`${at}: X needs dur >= 0`);
        const list = slices.get(thread) ?? [];
        slices.set(thread, list);
        list.push({ s: ts, e: ts + (e.dur as number) });
        break;
      }
      case "B":
        open.set(thread, [...(open.get(thread) ?? []), ts]);
        break;
      case "E": {
        const stack = open.get(thread) ?? [];
        if (stack.length === 0) out.push(`${at}: E without B`);
        stack.pop();
        break;
      }
      case "i":
      case "I":
        if (e.s !== undefined && !["g", "p", "t"].includes(e.s as string)) out.push(`${at}: instant scope must be g, p or t`);
        break;
      case "C": {
        const args = e.args as Record<string, unknown> | undefined;
        if (typeof args !== "object" || args === null || Object.keys(args).length === 0) out.push(`${at}: counter needs args`);
        else for (const [k, v] of Object.entries(args)) if (typeof v !== "number" || !Number.isFinite(v)) out.push(`${at}: counter series ${k} is not a number`);
        break;
      }
      default:
        break;
    }
  });
  for (const [thread, stack] of open) if (stack.length > 0) out.push(`thread ${thread}: ${stack.length} B without E`);
  // Complete slices of a thread: in start order, each either nests in the enclosing one or starts after it ends.
  for (const [thread, list] of slices) {
    const stack: { s: number; e: number }[] = [];
    for (const x of list) {
      while (stack.length > 0 && stack[stack.length - 1].e <= x.s) stack.pop();
      const top = stack[stack.length - 1];
      if (top !== undefined && x.e > top.e) out.push(`thread ${thread}: slice [${x.s}, ${x.e}] overlaps [${top.s}, ${top.e}] without nesting`);
      stack.push(x);
    }
  }
  return out;
}
