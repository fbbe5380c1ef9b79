import { describe, expect, it } from "vitest";
import { isBlankLine, parseEventLine, sniffEventType, sniffPrefixType, typeSniffer } from "./line-parse.js";
import { buildLine, makeEventId } from "./envelope.js";

const b = (s: string): Buffer => Buffer.from(s, "utf8");

describe("sniffPrefixType", () => {
  it("reads the canonical prefix's type, as sniffEventType, but does not look past it for a later type key", () => {
    expect(sniffPrefixType(b('{"id":"1-a","timestamp":"t","type":"ünï","data":1}'))).toBe("ünï");
    const dup = b('{"id":"1-a","timestamp":"t","type":"info","data":{},"type":"other"}');
    expect(sniffEventType(dup)).toBeUndefined();
    expect(sniffPrefixType(dup)).toBe("info");
    for (const s of ['{"type":"info","id":"1","timestamp":"t","data":1}', '{"id":"1","timestamp":"t","type":"in\\u0066o","data":1}', '{"id":"1","timestamp":"t","type":"info"x', ""]) {
      expect(sniffPrefixType(b(s))).toBeUndefined();
    }
  });
});

describe("sniffEventType", () => {
  it("reads the type of a canonical line without parsing the rest", () => {
    expect(sniffEventType(b('{"id":"1-a","timestamp":"2026-01-01T00:00:00.000Z","type":"state.transition","data":{not json'))).toBe("state.transition");
    expect(sniffEventType(b('{"id":"1-a","timestamp":"t","type":"ünï","data":1}'))).toBe("ünï");
  });

  it("gives up (undefined) on anything but the exact canonical prefix", () => {
    for (const s of [
      '{"type":"info","id":"1","timestamp":"t","data":1}',
      '{"id":"1-\\"a","timestamp":"t","type":"info","data":1}',
      '{"id":"1","timestamp":"t","type":"in\\u0066o","data":1}',
      '{"id":"1","timestamp":"t","type":"info"',
      '{"id":"1","timestamp":"t","type":"info"x',
      ' {"id":"1","timestamp":"t","type":"info","data":1}',
      '{"id":"1","timestamp":"t","data":{"type":"info"}}',
      "",
    ]) expect(sniffEventType(b(s))).toBeUndefined();
  });

  it("agrees with JSON.parse on every canonical line the writer produces", () => {
    for (const type of ["info", "tool.result", "a\"b", "日本"]) {
      const { bytes, event } = buildLine({ type, data: { x: 1 } }, { now: () => 1, random: () => 0.5 });
      const s = sniffEventType(bytes.subarray(0, bytes.length - 1));
      if (type.includes('"')) expect(s).toBeUndefined();
      else expect(s).toBe(event.type);
    }
  });
});

describe("typeSniffer", () => {
  it("says in/out of the set from the bytes, and undefined when the prefix is not canonical", () => {
    const m = typeSniffer(["state.transition", "日本"]);
    expect(m(b('{"id":"1","timestamp":"t","type":"state.transition","data":1}'))).toBe(true);
    expect(m(b('{"id":"1","timestamp":"t","type":"日本","data":1}'))).toBe(true);
    expect(m(b('{"id":"1","timestamp":"t","type":"state.transitio","data":1}'))).toBe(false);
    expect(m(b('{"id":"1","timestamp":"t","type":"state.transitionX","data":1}'))).toBe(false);
    expect(m(b('{"type":"state.transition","id":"1","timestamp":"t","data":1}'))).toBeUndefined();
  });
});

describe("parseEventLine", () => {
  it("accepts an envelope and reports CORRUPT_LINE / INVALID_UTF8 with line and byte offset", () => {
    expect(parseEventLine(b('{"id":"1","timestamp":"t","type":"x","data":null}'), 0, 0)).toMatchObject({ ok: true, event: { type: "x", data: null } });
    for (const s of ["{", "[]", "null", '{"id":1,"timestamp":"t","type":"x","data":1}', '{"id":"1","timestamp":"t","type":"x"}', '{"id":"1","timestamp":"t","type":7,"data":1}']) {
      expect(parseEventLine(b(s), 3, 99)).toMatchObject({ ok: false, finding: { code: "CORRUPT_LINE", severity: "error", line: 3, byteOffset: 99 } });
    }
    const bad = Buffer.concat([b('{"id":"1","timestamp":"t","type":"x","data":"'), Buffer.from([0xc3, 0x28]), b('"}')]);
    expect(parseEventLine(bad, 4, 7)).toMatchObject({ ok: false, finding: { code: "INVALID_UTF8", line: 4, byteOffset: 7 } });
  });

  it("treats whitespace-only lines as blank", () => {
    expect(isBlankLine(b(""))).toBe(true);
    expect(isBlankLine(b(" \t\r"))).toBe(true);
    expect(isBlankLine(b(" x"))).toBe(false);
  });
});

describe("buildLine", () => {
  const ids = { now: () => 1772736515931, random: () => 0.123456789 };

  it("makes the exact compact line with id and timestamp as the reference runtime does", () => {
    const { bytes, event } = buildLine({ type: "info", data: { message: "héllo" } }, ids);
    expect(event.id).toBe(`1772736515931-${(0.123456789).toString(36).substring(2, 11)}`);
    expect(event.timestamp).toBe("2026-03-05T18:48:35.931Z");
    expect(bytes.toString("utf8")).toBe(`{"id":"${event.id}","timestamp":"2026-03-05T18:48:35.931Z","type":"info","data":{"message":"héllo"}}\n`);
    expect(makeEventId(5, 0.5)).toBe("5-i");
  });

  it("keeps given ids and timestamps and the canonical key order whatever the input order", () => {
    const { bytes } = buildLine({ data: 1, timestamp: "T", type: "info", id: "I" } as never, ids);
    expect(bytes.toString()).toBe('{"id":"I","timestamp":"T","type":"info","data":1}\n');
  });

  it("rejects connection-state events with CONNECTION_STATE_EVENT", () => {
    for (const type of ["server.ready", "pong", "history.batch", "incomplete.codon"]) {
      expect(() => buildLine({ type, data: {} }, ids)).toThrow(expect.objectContaining({ code: "CONNECTION_STATE_EVENT" }));
    }
  });

  it("rejects malformed envelopes with INVALID_EVENT", () => {
    const cases: unknown[] = [
      { type: "", data: 1 }, { type: 3, data: 1 }, { type: "info" }, { type: "info", data: undefined },
      { type: "info", data: 1, id: 5 }, { type: "info", data: 1, timestamp: 5 }, { type: "info", data: () => 1 },
      { type: "info", data: { n: 10n } }, null,
    ];
    for (const c of cases) expect(() => buildLine(c as never, ids)).toThrow(expect.objectContaining({ code: "INVALID_EVENT" }));
  });
});
