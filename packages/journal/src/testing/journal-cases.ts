/**
 * Journal byte corpora for reader tests: conformance-like lines plus every kind of damage a reader
 * must tolerate (blank, corrupt, invalid UTF-8, torn tail, CRLF, long lines, chunk-crossing lines).
 */
const TYPES = ["state.transition", "assistant.action", "tool.result", "file.updated", "info", "sentinel.output", "token.usage"];

/** Deterministic PRNG (mulberry32) so cases are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One canonical line (with `\n`) shaped like the reference runtime's, `bodyBytes` of payload text. */
export function eventLine(i: number, type: string, bodyBytes = 40, rnd: () => number = Math.random): string {
  const ms = 1772736515931 + i * 7;
  const text = "x".repeat(Math.max(0, bodyBytes - 12)) + "é😀 ü" + i;
  return (
    JSON.stringify({
      id: `${ms}-${rnd().toString(36).substring(2, 11)}`,
      timestamp: new Date(ms).toISOString(),
      type,
      data: type === "state.transition" ? { transitionType: "CodonStarted", runId: `run-${i % 3}`, codonId: `c${i % 5}`, text } : { text, n: i },
    }) + "\n"
  );
}

/** Named journals every reader must handle identically to the oracle. */
export function readerContractCases(): { name: string; bytes: Buffer }[] {
  const rnd = prng(7);
  const typical = Array.from({ length: 60 }, (_, i) => eventLine(i, TYPES[i % TYPES.length], 30 + ((i * 37) % 300), rnd)).join("");
  const cases: { name: string; bytes: Buffer }[] = [
    { name: "empty file", bytes: Buffer.alloc(0) },
    { name: "a lone newline", bytes: Buffer.from("\n") },
    { name: "conformance-like lines", bytes: Buffer.from(typical) },
    { name: "one line without a final newline (torn only)", bytes: Buffer.from(eventLine(0, "info").trimEnd()) },
    { name: "missing final newline", bytes: Buffer.from(typical + eventLine(99, "info").slice(0, 30)) },
    {
      name: "blank and whitespace lines",
      bytes: Buffer.from("\n\n" + eventLine(1, "info") + "   \n\t\n" + eventLine(2, "tool.result") + "\r\n\n"),
    },
    {
      name: "corrupt lines in the middle",
      bytes: Buffer.from(
        eventLine(1, "info") + "not json\n" + eventLine(2, "state.transition") + '{"id":1,"timestamp":"t","type":"info","data":{}}\n' +
          '[1,2,3]\n{"id":"a","timestamp":"t","type":"info"}\n' + '{"id":"a","timestamp":"t","type":"state.transition","data":{}\n' +
          eventLine(3, "info"),
      ),
    },
    {
      name: "invalid UTF-8",
      bytes: Buffer.concat([
        Buffer.from(eventLine(1, "info")),
        Buffer.from('{"id":"1-a","timestamp":"t","type":"info","data":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}\n'),
        Buffer.from('{"id":"1-b","timestamp":"t","type":"state.transition","data":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}\n'),
        Buffer.from(eventLine(2, "state.transition")),
      ]),
    },
    { name: "CRLF line endings", bytes: Buffer.from(eventLine(1, "info").replace("\n", "\r\n") + eventLine(2, "info")) },
    {
      name: "non-canonical key order and unknown types",
      bytes: Buffer.from(
        '{"type":"info","id":"1-x","timestamp":"t","data":null}\n' + '{"id":"1-y","timestamp":"t","type":"future.thing","data":[1],"extra":true}\n' +
          '{"id":"1-\\"z","timestamp":"t","type":"state.transition","data":{}}\n' + eventLine(5, "state.transition"),
      ),
    },
    {
      // Lines longer than a read chunk (1 MiB) and lines across chunk boundaries: carry-over is exercised.
      name: "long lines crossing read chunks",
      bytes: Buffer.from(
        eventLine(0, "info") + eventLine(1, "file.updated", 3 * 1024 * 1024) + eventLine(2, "state.transition") +
          eventLine(3, "file.updated", 2 * 1024 * 1024) + "\n" + eventLine(4, "info") + eventLine(5, "tool.result", 1024 * 1024).slice(0, 500_000),
      ),
    },
  ];
  return cases;
}

/** A random journal mixing every line kind (for property tests). */
export function randomJournal(seed: number, lines: number): Buffer {
  const rnd = prng(seed);
  const parts: Buffer[] = [];
  for (let i = 0; i < lines; i++) {
    const k = rnd();
    if (k < 0.7) parts.push(Buffer.from(eventLine(i, TYPES[Math.floor(rnd() * TYPES.length)], Math.floor(rnd() * 500), rnd)));
    else if (k < 0.8) parts.push(Buffer.from(rnd() < 0.5 ? "\n" : " \n"));
    else if (k < 0.9) parts.push(Buffer.from(eventLine(i, "info").slice(0, 1 + Math.floor(rnd() * 40)) + "\n"));
    else parts.push(Buffer.concat([Buffer.from('{"id":"9-q","timestamp":"t","type":"info","data":"'), Buffer.from([0x80 + Math.floor(rnd() * 64)]), Buffer.from('"}\n')]));
  }
  if (rnd() < 0.5) parts.push(Buffer.from(eventLine(lines, "info").slice(0, 1 + Math.floor(rnd() * 60))));
  return Buffer.concat(parts);
}
