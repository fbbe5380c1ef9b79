import { describe, expect, it } from "vitest";
import { CAS_THRESHOLD_BYTES, rewriteLine } from "./body-sites.js";
import { findPointers, spliceBodies } from "./rehydrate.js";

function line(type: string, data: unknown): Buffer {
  return Buffer.from(JSON.stringify({ id: "1772712167696-oqch0jskr", timestamp: "2026-03-05T12:02:47.696Z", type, data }));
}

function roundTrip(original: Buffer): Buffer {
  const rw = rewriteLine(original, "extended")!;
  const text = rw.pointer.toString("utf8");
  const bodies = new Map(rw.bodies.map((b) => [b.sha256, b.body.toString("utf8")]));
  return Buffer.from(spliceBodies(text, findPointers(text), (s) => bodies.get(s)));
}

describe("rewriteLine (the invertibility proof)", () => {
  it("moves a file.updated body of exactly 4096 bytes, with contentRef in the same key position", () => {
    const body = "é".repeat(2048); // 4096 UTF-8 bytes, 2048 UTF-16 units
    const original = line("file.updated", { path: "a", content: body, after: 1 });
    const rw = rewriteLine(original, "compatible");
    expect(rw).not.toBeNull();
    const parsed = JSON.parse(rw!.pointer.toString("utf8"));
    expect(Object.keys(parsed.data)).toEqual(["path", "contentRef", "after"]);
    expect(Object.keys(parsed.data.contentRef)).toEqual(["sha256", "bytes", "encoding", "ref"]);
    expect(parsed.data.contentRef.bytes).toBe(4096);
    expect(parsed.data.contentRef.ref).toBe("cas");
    expect(rw!.bodies[0].body.equals(Buffer.from(body))).toBe(true);
    expect(roundTrip(original).equals(original)).toBe(true);
  });

  it("the in-place span replacement writes what JSON.stringify of the rewritten object writes; the same body text twice takes that path too", () => {
    const body = `quote " backslash \\ nl \n é 😀 ${"w".repeat(5000)}`;
    // Unique: the span path. Twice (an earlier key holds the same text as "content"): the object path.
    for (const data of [{ path: "a", content: body, n: 1 }, { extra: { content: body }, path: "a", content: body }]) {
      const original = line("file.updated", data);
      const rw = rewriteLine(original, "compatible")!;
      const ref = { sha256: rw.bodies[0].sha256, bytes: Buffer.byteLength(body), encoding: "utf-8", ref: "cas" };
      const expected = JSON.parse(original.toString());
      const d: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(expected.data as Record<string, unknown>)) d[k === "content" ? "contentRef" : k] = k === "content" ? ref : v;
      expect(rw.pointer.toString("utf8")).toBe(JSON.stringify({ ...expected, data: d }));
      expect(roundTrip(original).equals(original)).toBe(true);
    }
  });

  it("keeps a body of 4095 bytes inline, and a line under 4096 bytes", () => {
    expect(rewriteLine(line("file.updated", { content: "x".repeat(CAS_THRESHOLD_BYTES - 1) }), "compatible")).toBeNull();
    expect(rewriteLine(line("file.updated", { content: "x".repeat(100) }), "compatible")).toBeNull();
  });

  it("moves state.snapshot recentFileAccess.content and nothing else of the snapshot", () => {
    const original = line("state.snapshot", { completedCodons: [{ content: "y".repeat(5000) }], recentFileAccess: { path: "p", content: "z".repeat(5000) } });
    const rw = rewriteLine(original, "compatible")!;
    expect(rw.bodies.map((b) => b.body.toString())).toEqual(["z".repeat(5000)]);
    expect(roundTrip(original).equals(original)).toBe(true);
  });

  it("moves the extended sites only in extended mode", () => {
    const tool = line("tool.result", { toolName: "Bash", result: "r".repeat(6000), isError: false });
    const action = line("assistant.action", { action: "tool_use", content: "c".repeat(5000), toolInput: "t".repeat(5000) });
    const sentinel = line("sentinel.output", { content: "s".repeat(5000) });
    for (const l of [tool, action, sentinel]) {
      expect(rewriteLine(l, "compatible")).toBeNull();
      expect(rewriteLine(l, "extended")).not.toBeNull();
      expect(roundTrip(l).equals(l)).toBe(true);
    }
    expect(rewriteLine(action, "extended")!.bodies.map((b) => b.key)).toEqual(["content", "toolInput"]);
    // toolInput as an object is not a string body: stays inline.
    const objInput = line("assistant.action", { toolInput: { command: "q".repeat(5000) } });
    expect(rewriteLine(objInput, "extended")).toBeNull();
  });

  it("refuses lines whose rewrite could not rehydrate to the identical string", () => {
    const body = JSON.stringify("w".repeat(5000));
    const head = `{"id":"1-a","timestamp":"2026-03-05T12:00:00.000Z","type":"file.updated","data":{"path":"a"`;
    const cases = [
      `${head},"content":${body},"content":${body}}}`, // duplicate keys
      `${head},"content":${body.slice(0, -1)}\\u00e9"}}`, // escape JSON.stringify would not write
      `${head},"content":${body.slice(0, -1)}\\/"}}`, // escaped slash
      `${head},"content":${body.slice(0, -1)}\\ud800"}}`, // lone surrogate
      `${head}, "content": ${body}}}`, // whitespace
      `${head},"content":${body},"contentRef":1}}`, // the pointer key already exists
      `${head},"content":${body},"7":1}}`, // an integer key JSON.parse puts first
      `${head},"content":${body}},"9":1}`, // the same at the top level
    ];
    for (const c of cases) expect(rewriteLine(Buffer.from(c), "extended")).toBeNull();
    // The same body written canonically is moved (so the refusals above are about the proof),
    // also beside a `__proto__` key (JSON.parse makes it an own key; the rewrite keeps it one).
    expect(rewriteLine(Buffer.from(`${head},"content":${body}}}`), "compatible")).not.toBeNull();
    const proto = Buffer.from(`${head},"content":${body},"__proto__":{"x":1}}}`);
    expect(roundTrip(proto).equals(proto)).toBe(true);
  });

  it("refuses a line whose later top-level key holds an escape (it may spell a second type), canonical or not", () => {
    const body = JSON.stringify("w".repeat(5000));
    const head = `{"id":"1-a","timestamp":"2026-03-05T12:00:00.000Z","type":"file.updated","data":{"path":"a","content":${body}}`;
    // Canonical (JSON.stringify writes these escapes): only the check on the parsed keys refuses them.
    for (const key of ['"x\\"y"', '"x\\ny"', '"x\\\\y"']) {
      const l = Buffer.from(`${head},${key}:1}`);
      expect(JSON.stringify(JSON.parse(l.toString())) === l.toString()).toBe(true);
      expect(rewriteLine(l, "compatible")).toBeNull();
    }
    expect(rewriteLine(Buffer.from(`${head},"\\u0074ype":"info"}`), "compatible")).toBeNull();
    expect(rewriteLine(Buffer.from(`${head},"type":"file.updated"}`), "compatible")).toBeNull();
    // The same line with a plain later key is moved.
    expect(rewriteLine(Buffer.from(`${head},"xy":1}`), "compatible")).not.toBeNull();
  });

  it("refuses invalid UTF-8 and non-objects", () => {
    const good = line("file.updated", { content: "x".repeat(5000) });
    const bad = Buffer.from(good);
    bad[200] = 0xff;
    expect(rewriteLine(bad, "compatible")).toBeNull();
    expect(rewriteLine(Buffer.from(`{"id":"1","timestamp":"t","type":"file.updated","data":"${"x".repeat(5000)}"}`), "compatible")).toBeNull();
  });
});

describe("findPointers", () => {
  it("rejects a pointer whose sha is a path or not lowercase hex", () => {
    for (const sha of ["../../etc/passwd", "A".repeat(64), "abc"]) {
      const text = `{"data":{"contentRef":{"sha256":"${sha}","bytes":5,"encoding":"utf-8","ref":"cas"}}}`;
      let code = "ok";
      try {
        findPointers(text);
      } catch (e) {
        code = (e as { code: string }).code;
      }
      expect(code).toBe("CAS_BAD_REF");
    }
  });

  it("ignores a contentRef whose ref is not cas (not a pointer)", () => {
    expect(findPointers(`{"contentRef":{"sha256":"${"a".repeat(64)}","bytes":5,"encoding":"utf-8","ref":"s3"}}`)).toEqual([]);
  });
});
