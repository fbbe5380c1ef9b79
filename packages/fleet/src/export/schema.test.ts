/**
 * The export schema and its documents agree: docs/fleet-export.md lists every column with its
 * type and nullability, and the README's ClickHouse DDL is `clickhouseDdl`'s (regenerate both
 * from schema.ts when a column changes, and bump EXPORT_SCHEMA_VERSION).
 */
import * as fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EXPORT_SCHEMA, EXPORT_TABLES, clickhouseDdl, duckdbColumns } from "./schema.js";
import { executionId } from "./export.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");

describe("export schema", () => {
  it("docs/fleet-export.md has every column with its type and nullability", () => {
    const doc = fs.readFileSync(path.join(REPO, "docs/fleet-export.md"), "utf8");
    for (const t of EXPORT_TABLES) {
      const section = doc.split(`### \`${t}\``)[1]?.split(/\n##/)[0] ?? "";
      const rows = section.split("\n").filter((l) => l.startsWith("| `"));
      expect(rows.map((l) => l.split(" | ").slice(0, 3).join(" | "))).toEqual(
        EXPORT_SCHEMA[t].map((c) => `| \`${c.name}\` | ${c.type} | ${c.nullable ? "yes" : "no"}`),
      );
    }
  });

  it("the README's ClickHouse DDL is clickhouseDdl's, for every table", () => {
    const readme = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
    for (const t of EXPORT_TABLES) expect(readme).toContain(clickhouseDdl(t, "hw"));
  });

  it("every table starts with the execution columns; names are unique; DuckDB columns list them all", () => {
    for (const t of EXPORT_TABLES) {
      const names = EXPORT_SCHEMA[t].map((c) => c.name);
      expect(names.slice(0, 2)).toEqual(["execution_id", "execution_path"]);
      expect(new Set(names).size).toBe(names.length);
      expect(duckdbColumns(t).match(/: '/g)?.length).toBe(names.length);
    }
  });

  it("execution ids are stable, path-safe and differ per identity", () => {
    const a = executionId("/runs/ci/42 job", "ci/42 job");
    expect(a).toBe(executionId("/elsewhere/ci/42 job", "ci/42 job"));
    expect(a).toMatch(/^42_job-[0-9a-f]{12}$/);
    expect(executionId("/runs/ci/42 job", "ci/43 job")).not.toBe(a);
    expect(executionId("/x/..hidden=1", ".")).toMatch(/^hidden_1-[0-9a-f]{12}$/);
    expect(executionId("/x/....", ".")).toMatch(/^x-[0-9a-f]{12}$/);
  });
});
