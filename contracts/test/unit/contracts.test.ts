import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ERROR_CODES, isReservedKind, RECORD_KINDS, renderJsonSchema, wireSchemas } from "@aexhq/brain-contracts";
import { renderOpenApi } from "@aexhq/brain-contracts/openapi";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

describe("error codes", () => {
  it("docs/errors.md lists exactly the codes in contracts, with the same HTTP status and scope", () => {
    const section = readFileSync(join(root, "docs", "errors.md"), "utf8");
    const rows = [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\S+)\s*\|\s*(\w+)\s*\|/gm)].map((m) => ({
      code: m[1]!,
      http: m[2] === "—" ? 0 : Number(m[2]),
      scope: m[3]!,
    }));
    expect(rows.map((r) => r.code).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const r of rows) {
      const def = ERROR_CODES[r.code as keyof typeof ERROR_CODES];
      expect({ code: r.code, http: r.http, scope: r.scope }).toEqual({
        code: r.code,
        http: def.http,
        scope: def.scope,
      });
    }
  });

  it("codes are stable snake_case strings", () => {
    for (const code of Object.keys(ERROR_CODES)) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });
});

describe("wire schemas", () => {
  it("the checked-in JSON Schemas match the zod definitions (run npm run schemas after a change)", () => {
    for (const [name, schema] of Object.entries(wireSchemas)) {
      const file = readFileSync(join(root, "contracts", "json-schema", `${name}.json`), "utf8");
      expect(file, name).toBe(renderJsonSchema(schema));
    }
  });

  it("the checked-in OpenAPI document matches the route table (run npm run schemas after a change)", () => {
    expect(readFileSync(join(root, "contracts", "openapi.json"), "utf8")).toBe(renderOpenApi());
  });
});

describe("record kinds", () => {
  it("every journal record kind is reserved, and so is the brain. prefix", () => {
    for (const k of RECORD_KINDS) expect(isReservedKind(k)).toBe(true);
    expect(isReservedKind("brain.anything")).toBe(true);
    expect(isReservedKind("lookup_started")).toBe(false);
  });

  it("docs/sql.md documents every record kind", () => {
    const page = readFileSync(join(root, "docs", "sql.md"), "utf8");
    for (const k of RECORD_KINDS) expect(page).toMatch(new RegExp(`^\\|\\s*\`${k}\`\\s*\\|`, "m"));
  });
});

describe("the WIT binding", () => {
  it("the SDK publishes exactly contracts/tool.wit as @aexhq/brain/contracts/tool.wit", () => {
    const source = readFileSync(join(root, "contracts", "tool.wit"), "utf8");
    const published = readFileSync(join(root, "sdk", "contracts", "tool.wit"), "utf8");
    expect(published).toBe(source);
    expect(source).toContain("package brain:tool@0.2.0;");
    for (const fn of ["emit:", "emit-result:", "returned:", "finish:", "model:", "telemetry:", "export run:"]) {
      expect(source).toContain(fn);
    }
  });

  it("resolves through the SDK's package exports", async () => {
    const { createRequire } = await import("node:module");
    const require = createRequire(join(root, "examples", "package.json"));
    expect(readFileSync(require.resolve("@aexhq/brain/contracts/tool.wit"), "utf8")).toBe(
      readFileSync(join(root, "contracts", "tool.wit"), "utf8"),
    );
  });
});
