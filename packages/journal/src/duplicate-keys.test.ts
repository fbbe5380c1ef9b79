import { describe, expect, it } from "vitest";
import { sniffEventType, typeSniffer } from "./line-parse.js";
import { eventsFromRawLines } from "./plain-reader.js";

const b = (s: string): Buffer => Buffer.from(s, "utf8");

describe("the type sniffer agrees with JSON.parse's last-wins rule for a duplicate type key", () => {
  const cases: [string, string][] = [
    ['{"id":"1","timestamp":"t","type":"info","data":{},"type":"error"}', "error"],
    ['{"id":"1","timestamp":"t","type":"info","data":{"x":"}\\"{,"},"\\u0074ype":"error"}', "error"],
    ['{"id":"1","timestamp":"t","type":"info","data":{"type":"nested","a":[{"type":"x"}]}}', "info"],
    ['{"id":"1","timestamp":"t","type":"info","data":"a \\\\\\" \\\\","type":"error"}', "error"],
    ['{"id":"1","timestamp":"t","type":"info","data":{"s":"\\\\"},"typex":1}', "info"],
  ];
  it.each(cases)("%s has type %s", async (line, last) => {
    expect(JSON.parse(line).type).toBe(last);
    const sniffed = sniffEventType(b(line));
    // The sniffer may decline (undefined: parse it), never name a type JSON.parse does not give.
    expect(sniffed === undefined || sniffed === last).toBe(true);
    const wantsLast = typeSniffer([last])(b(line));
    expect(wantsLast === undefined || wantsLast === true).toBe(true);
    const other = last === "info" ? "error" : "info";
    const raw = [{ line: 0, offset: 0, bytes: b(line), terminated: true }];
    async function* src() { yield* raw; }
    const got: string[] = [];
    for await (const r of eventsFromRawLines(src(), { types: [last] })) got.push(r.event.type);
    expect(got).toEqual([last]);
    for await (const r of eventsFromRawLines(src(), { types: [other] })) got.push(r.event.type);
    expect(got).toEqual([last]);
  });

  it("still sniffs a canonical line with nested type keys (no parse needed)", () => {
    expect(sniffEventType(b('{"id":"1","timestamp":"t","type":"state.transition","data":{"transition":{"type":"RunStarted","data":{}}}}'))).toBe("state.transition");
    expect(typeSniffer(["info"])(b('{"id":"1","timestamp":"t","type":"state.transition","data":{"transition":{"type":"RunStarted"}}}'))).toBe(false);
  });
});
