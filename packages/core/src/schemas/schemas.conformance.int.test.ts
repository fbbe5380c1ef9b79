import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ALL_EVENT_TYPES } from "../catalog.js";
import { evolve, initialState } from "../reducer.js";
import type { StateTransition } from "../state-types.js";
import { EVENT_PAYLOAD_SCHEMAS } from "./event-schemas.js";
import { safeParseEvent } from "./parse-event.js";
import { hankweaveStateSchema, parseState } from "./state-schemas.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const CONF = process.env.HANKWEAVE_CONFORMANCE ?? path.resolve(REPO, "../shared/conformance");

if (!existsSync(CONF)) {
  it("conformance folder is absent: these tests cannot run", () => {
    if (process.env.REQUIRE_CONFORMANCE) throw new Error(`missing ${CONF}`);
    console.warn(`skipped: ${CONF} absent`);
    expect(existsSync(CONF)).toBe(false);
  });
}

describe.runIf(existsSync(CONF))("schemas against the conformance executions", () => {
  const dirs = existsSync(CONF) ? readdirSync(CONF).sort() : [];

  it("has a payload schema for all 36 catalog types and plan.updated", () => {
    expect(ALL_EVENT_TYPES.length).toBe(36);
    for (const t of [...ALL_EVENT_TYPES, "plan.updated"]) expect(EVENT_PAYLOAD_SCHEMAS[t], t).toBeDefined();
  });

  it("accepts every event of every journal (7,166 events), all of known, journaled types", () => {
    let total = 0;
    const failures: unknown[] = [];
    const types = new Set<string>();
    for (const d of dirs) {
      const journal = path.join(CONF, d, ".hankweave/events/events.jsonl");
      if (!existsSync(journal)) continue;
      readFileSync(journal, "utf8").split("\n").forEach((line, n) => {
        if (line === "") return;
        total++;
        const r = safeParseEvent(JSON.parse(line));
        if (!r.success) failures.push({ d, n, issues: r.issues });
        else {
          types.add(r.value.event.type);
          if (!r.value.known || !r.value.journaled) failures.push({ d, n, known: r.value.known, journaled: r.value.journaled });
        }
      });
    }
    expect(failures).toEqual([]);
    expect(total).toBe(148 + 65 + 415 + 22 + 49 + 6467);
    expect(types.size).toBe(18);
  });

  it("accepts every saved state.json and state.json.bak, and the fold of every journal", () => {
    let checked = 0;
    for (const d of dirs) {
      for (const f of ["state.json", "state.json.bak"]) {
        const p = path.join(CONF, d, ".hankweave", f);
        if (!existsSync(p)) continue;
        const r = hankweaveStateSchema.safeParse(JSON.parse(readFileSync(p, "utf8")));
        expect(r.success ? [] : r.error.issues, `${d}/${f}`).toEqual([]);
        checked++;
      }
      const journal = path.join(CONF, d, ".hankweave/events/events.jsonl");
      if (!existsSync(journal)) continue;
      let state = initialState();
      for (const line of readFileSync(journal, "utf8").split("\n")) {
        if (!line.includes('"type":"state.transition"')) continue;
        const ev = JSON.parse(line) as { timestamp: string; data: { transition: StateTransition } };
        state = evolve(state, ev.data.transition, ev.timestamp);
      }
      const r = hankweaveStateSchema.safeParse(state);
      expect(r.success ? [] : r.error.issues, `fold of ${d}`).toEqual([]);
    }
    expect(checked).toBe(13);
  });

  it("parseState hands back the saved state.json untouched (same bytes when re-serialised)", () => {
    const p = path.join(CONF, "plan-gen-execution/.hankweave/state.json");
    const text = readFileSync(p, "utf8");
    expect(JSON.stringify(parseState(JSON.parse(text)), null, 2)).toBe(text);
  });
});
