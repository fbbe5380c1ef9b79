/**
 * Journal data used as keys and printed (family `keys`, issue 14 classes 5 and 6): control bytes
 * in types and ids printed by human output, event types named like Object.prototype members, and
 * a line with a duplicate `type` key (JSON.parse keeps the last one: every command must agree).
 */
import type { AdversarialCase, CaseOutcome } from "../harness.js";
import { execWithJournal, finishedLines, joinLines } from "../executions.js";

const EVIL = "x\u001b]0;pwned\u0007\u001b[2J\u009b6n\u202e";
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
const ev = (i: number, type: string, data: unknown = {}): string =>
  JSON.stringify({ id: `${9000 + i}-k${i}`, timestamp: new Date(Date.UTC(2026, 2, 5, 13, 0, i)).toISOString(), type, data });

/** Extra check of a keys case: what the output must (not) hold. */
export type OutputCheck = (o: CaseOutcome) => string | null;

export interface KeysCase extends AdversarialCase {
  check: OutputCheck;
}

const noRawControl: OutputCheck = (o) => (RAW_CONTROL.test(o.stdout) || RAW_CONTROL.test(o.stderr) ? "a raw control byte reached the terminal" : null);

function evilJournal(): Buffer {
  return joinLines([...finishedLines(), ev(0, EVIL, { codonId: EVIL, message: EVIL }), ev(1, "info", { codonId: EVIL })]);
}
const PROTO = ["__proto__", "__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];
function protoJournal(): Buffer {
  return joinLines([...finishedLines(), ...PROTO.map((t, i) => ev(i, t))]);
}
const DUP = '{"id":"9100-dup","timestamp":"2026-03-05T13:10:00.000Z","type":"info","data":{},"type":"error"}';
function dupJournal(): Buffer {
  return joinLines([...finishedLines(), DUP]);
}

export function keyCases(): KeysCase[] {
  const out: KeysCase[] = [];
  const human: [string, (e: string) => string[]][] = [
    ["stats", (e) => ["stats", e]], ["audit", (e) => ["audit", e]], ["verify", (e) => ["verify", e]], ["summary", (e) => ["summary", e]],
    ["query", (e) => ["query", e, "SELECT type, codon FROM events WHERE line >= 27"]], ["rebuild", (e) => ["rebuild", e]],
  ];
  for (const [label, argv] of human) {
    out.push({
      name: `keys/control-bytes/${label}`, family: "keys", classes: [5], command: argv("x")[0], exit: [0, 1],
      mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/], check: noRawControl,
      setup: (root) => { const exec = execWithJournal(root, evilJournal()); return { exec, argv: argv(exec) }; },
    });
  }
  out.push({
    name: "keys/control-bytes/stats-json-exact", family: "keys", classes: [5], command: "stats", exit: [0],
    check: (o) => (JSON.parse(o.stdout).eventsByType[EVIL] === 1 ? null : "JSON output lost the exact type"),
    setup: (root) => { const exec = execWithJournal(root, evilJournal()); return { exec, argv: ["stats", exec, "--json"] }; },
  });
  const protoCounts: OutputCheck = (o) => {
    const s = JSON.parse(o.stdout) as { eventsByType: Record<string, unknown> };
    const want: Record<string, number> = { __proto__: 2, constructor: 1, toString: 1, hasOwnProperty: 1, valueOf: 1 };
    for (const [k, n] of Object.entries(want)) if (!Object.hasOwn(s.eventsByType, k) || s.eventsByType[k] !== n) return `eventsByType[${k}] is ${String(s.eventsByType[k])}`;
    return null;
  };
  out.push({
    name: "keys/proto-types/stats-json", family: "keys", classes: [6], command: "stats", exit: [0], check: protoCounts,
    setup: (root) => { const exec = execWithJournal(root, protoJournal()); return { exec, argv: ["stats", exec, "--json"] }; },
  });
  out.push({
    name: "keys/proto-types/stats", family: "keys", classes: [6], command: "stats", exit: [0],
    check: (o) => (/function|\[object/.test(o.stdout) ? "a prototype member leaked into the counts" : null),
    setup: (root) => { const exec = execWithJournal(root, protoJournal()); return { exec, argv: ["stats", exec] }; },
  });
  out.push({
    name: "keys/proto-types/query", family: "keys", classes: [6], command: "query", exit: [0], mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/],
    check: (o) => {
      const rows = JSON.parse(o.stdout).rows as { type: string; n: number }[];
      const got = new Map(rows.map((r) => [r.type, r.n]));
      return got.get("__proto__") === 2 && got.get("constructor") === 1 && got.get("toString") === 1 ? null : `counts ${JSON.stringify(rows)}`;
    },
    setup: (root) => { const exec = execWithJournal(root, protoJournal()); return { exec, argv: ["query", exec, "SELECT type, count(*) AS n FROM events GROUP BY type", "--json"] }; },
  });
  for (const cmd of ["audit", "summary", "verify", "cat"]) {
    out.push({
      name: `keys/proto-types/${cmd}`, family: "keys", classes: [6], command: cmd, exit: [0], check: () => null,
      setup: (root) => { const exec = execWithJournal(root, protoJournal()); return { exec, argv: [cmd, exec] }; },
    });
  }
  const catCount = (type: string, n: number): OutputCheck => (o) => {
    const got = o.stdout.split("\n").filter((l) => l.length > 0 && JSON.parse(l).type === type).length;
    return got === n ? null : `cat --type ${type} printed ${got} line(s) of that type, expected ${n}`;
  };
  out.push({
    name: "keys/duplicate-type/cat-type-last", family: "keys", classes: [6], command: "cat", exit: [0], check: catCount("error", 1),
    setup: (root) => { const exec = execWithJournal(root, dupJournal()); return { exec, argv: ["cat", exec, "--type", "error"] }; },
  });
  out.push({
    name: "keys/duplicate-type/cat-type-first", family: "keys", classes: [6], command: "cat", exit: [0],
    check: (o) => (o.stdout.includes("9100-dup") ? "cat --type info printed the line whose last type is error" : null),
    setup: (root) => { const exec = execWithJournal(root, dupJournal()); return { exec, argv: ["cat", exec, "--type", "info"] }; },
  });
  out.push({
    name: "keys/duplicate-type/stats", family: "keys", classes: [6], command: "stats", exit: [0],
    check: (o) => (JSON.parse(o.stdout).eventsByType.error === 1 ? null : "stats did not count the last type"),
    setup: (root) => { const exec = execWithJournal(root, dupJournal()); return { exec, argv: ["stats", exec, "--json"] }; },
  });
  out.push({
    name: "keys/duplicate-type/query", family: "keys", classes: [6], command: "query", exit: [0], mayChange: [/^exec\/\.hankweave\/journal\.index\.sqlite/],
    check: (o) => (JSON.parse(o.stdout).rows[0]?.n === 1 ? null : `index counts ${o.stdout}`),
    setup: (root) => { const exec = execWithJournal(root, dupJournal()); return { exec, argv: ["query", exec, "SELECT count(*) AS n FROM events WHERE type = 'error'", "--json"] }; },
  });
  return out;
}
