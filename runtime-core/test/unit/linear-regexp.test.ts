// Tenant patterns run on RE2: JavaScript's escapes translated, JSON Schema's unanchored search,
// catastrophic patterns in linear time, and what RE2 cannot express named rather than run.
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { linearPattern, linearRegExp, linearRegExpOrSkip, re2Source } from "../../src/schemas/linear-regexp.js";
import { schemaSizeProblem, unsupportedPatterns } from "../../src/schemas/shape.js";

describe("linear patterns", () => {
  it("translate JavaScript's \\u escapes and [^] into RE2's syntax", () => {
    expect(re2Source("^\\u0041\\u{1F600}[^]$")).toBe("^\\x{0041}\\x{1F600}[\\s\\S]$");
    expect(re2Source("\\\\u0041")).toBe("\\\\u0041");
    const pattern = linearPattern("^\\u0041+$");
    expect(pattern instanceof Error ? pattern.message : pattern.matcher("AAA").find()).toBe(true);
  });

  it("run a catastrophic pattern in linear time through Ajv", () => {
    const ajv = new Ajv2020({ strict: false, code: { regExp: linearRegExp } });
    const validate = ajv.compile({ type: "string", pattern: "^(a|a)*$" });
    // A backtracking engine takes ~2^48 steps here; RE2 takes one pass.
    expect(validate(`${"a".repeat(48)}b`)).toBe(false);
    expect(validate("a".repeat(100_000))).toBe(true);
    const unanchored = ajv.compile({ type: "string", pattern: "b+" });
    expect([unanchored("abba"), unanchored("aaa")]).toEqual([true, false]);
    const keyed = ajv.compile({ type: "object", patternProperties: { "^x-": { type: "number" } } });
    expect([keyed({ "x-a": 1 }), keyed({ "x-a": "one" })]).toEqual([true, false]);
  });

  it("keep distinct patterns distinct in one schema", () => {
    const ajv = new Ajv2020({ strict: false, code: { regExp: linearRegExp } });
    const validate = ajv.compile({
      type: "object",
      properties: { a: { type: "string", pattern: "^a+$" }, b: { type: "string", pattern: "^b+$" } },
    });
    expect([validate({ a: "aa", b: "bb" }), validate({ a: "bb", b: "aa" })]).toEqual([true, false]);
  });

  it("name what RE2 cannot express; strictly refuse it, or leave it to the tool's own runtime", () => {
    const lookahead = "^(?=.{1,253}$)[a-z.]+$";
    expect(linearPattern(lookahead)).toBeInstanceOf(Error);
    expect(linearPattern("(a)\\1")).toBeInstanceOf(Error);
    expect(() =>
      new Ajv2020({ strict: false, code: { regExp: linearRegExp } }).compile({ pattern: lookahead }),
    ).toThrow(/RE2 cannot run/);
    const skipping = new Ajv2020({ strict: false, code: { regExp: linearRegExpOrSkip } }).compile({
      pattern: lookahead,
    });
    expect(skipping("anything")).toBe(true);
  });
});

describe("schema shape", () => {
  it("finds unsupported patterns by JSON pointer, not in data keywords", () => {
    const schema = {
      type: "object",
      properties: {
        host: { type: "string", pattern: "^(?=x)x$" },
        fine: { type: "string", pattern: "^[a-z]+$" },
        pattern: { type: "string", default: "(?=data)" },
      },
      patternProperties: { "(?!y)": {} },
      examples: [{ pattern: "(?=x)" }],
      const: { pattern: "(?=x)" },
    };
    expect(unsupportedPatterns(schema).map((p) => p.path)).toEqual(["/properties/host/pattern", "/patternProperties"]);
  });

  it("bounds a schema's bytes and depth", () => {
    expect(schemaSizeProblem({ type: "object" })).toBeNull();
    expect(schemaSizeProblem({ enum: ["x".repeat(200_000)] })).toMatch(/bytes/);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 60; i++) deep = { type: "array", items: deep };
    expect(schemaSizeProblem(deep)).toMatch(/deeper than 48/);
  });
});
