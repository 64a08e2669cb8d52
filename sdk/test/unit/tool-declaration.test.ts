import { BrainError } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool } from "../../src/tool.js";

const noop = async (): Promise<void> => {};

describe("tool() declaration", () => {
  it("exports the input schema as what zod accepts before parsing: defaulted fields are optional", () => {
    const t = tool({
      name: "search",
      description: "Search.",
      input: z.object({ query: z.string(), limit: z.number().int().default(10) }),
      run: noop,
    });
    expect(t.inputSchema.required).toEqual(["query"]);
    expect(t.inputSchema.properties).toMatchObject({ limit: { type: "integer", default: 10 } });
  });

  it("describes a plain z.object as accepting extra properties and z.strictObject as rejecting them", () => {
    const loose = tool({ name: "loose", description: "", input: z.object({ a: z.string() }), run: noop });
    const strict = tool({ name: "strict", description: "", input: z.strictObject({ a: z.string() }), run: noop });
    expect(loose.inputSchema).not.toHaveProperty("additionalProperties");
    expect(strict.inputSchema.additionalProperties).toBe(false);
  });

  it("exports the output schema as parsed output: a defaulted output field is required", () => {
    const t = tool({
      name: "out",
      description: "",
      input: z.object({}),
      output: z.object({ count: z.number().default(0) }),
      run: noop,
    });
    expect(t.outputSchema?.required).toEqual(["count"]);
    expect(tool({ name: "none", description: "", input: z.object({}), run: noop }).outputSchema).toBeNull();
  });

  it("fails when declaring a tool whose input schema JSON Schema cannot represent", () => {
    const declare = () => tool({ name: "dated", description: "", input: z.object({ at: z.date() }), run: noop });
    expect(declare).toThrow(BrainError);
    expect(declare).toThrow(expect.objectContaining({ code: "unrepresentable_schema" }));
  });

  it("fails when declaring a tool whose output schema transforms into an unrepresentable type", () => {
    const declare = () =>
      tool({
        name: "mapped",
        description: "",
        input: z.object({}),
        output: z.string().transform((s) => s.length),
        run: noop,
      });
    expect(declare).toThrow(expect.objectContaining({ code: "unrepresentable_schema" }));
  });

  it("derives the schemas once: every placement carries the declaration's JSON Schema objects", () => {
    const t = tool({ name: "once", description: "", input: z.object({ a: z.string() }), run: noop });
    const first = t();
    const second = t();
    expect(first.placement.inputSchema).toBe(t.inputSchema);
    expect(second.placement.inputSchema).toBe(t.inputSchema);
  });

  it("refuses tool names outside TOOL_NAME_PATTERN", () => {
    for (const name of ["", "1abc", "has space", "a".repeat(65), "dot.ted"]) {
      expect(() => tool({ name, description: "", input: z.object({}), run: noop })).toThrow(
        expect.objectContaining({ code: "invalid_tool" }),
      );
    }
  });

  it("refuses an options schema with an `env` key, which the factory reserves for placement", () => {
    expect(() =>
      tool({ name: "envy", description: "", input: z.object({}), options: z.object({ env: z.string() }), run: noop }),
    ).toThrow(expect.objectContaining({ code: "invalid_tool" }));
  });

  it("places the tool in the registering application by default, with its wire placement", () => {
    const t = tool({
      name: "lookup",
      description: "Look up.",
      input: z.object({ id: z.string() }),
      timeoutMs: 5000,
      run: noop,
    });
    const placed = t();
    expect(placed.name).toBe("lookup");
    expect(t.name).toBe("lookup");
    expect(placed.placement).toEqual({
      name: "lookup",
      description: "Look up.",
      inputSchema: t.inputSchema,
      outputSchema: null,
      env: { type: "host", name: "application" },
      timeoutMs: 5000,
    });
  });
});
