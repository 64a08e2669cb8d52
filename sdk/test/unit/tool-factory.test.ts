import { describe, expect, it } from "vitest";
import { z } from "zod";
import { hostEnv } from "../../src/environment.js";
import { runtimeOf, tool } from "../../src/tool.js";

const noop = async (): Promise<void> => {};

const lookup = tool({
  name: "lookup",
  description: "",
  input: z.object({ id: z.string() }),
  options: z.strictObject({
    prefix: z.string(),
    retries: z.number().default(3),
    tags: z.array(z.string()).default([]),
    nested: z.object({ upper: z.boolean() }).default({ upper: false }),
    label: z
      .string()
      .default("x")
      .transform((s) => s.toUpperCase()),
  }),
  run: noop,
});

describe("tool factory options", () => {
  it("parses options once, applying defaults and transforms", () => {
    const placed = lookup({ prefix: "customer:" });
    expect(placed.options).toEqual({
      prefix: "customer:",
      retries: 3,
      tags: [],
      nested: { upper: false },
      label: "X",
    });
    expect(runtimeOf(placed).options).toBe(placed.options);
  });

  it("freezes the parsed options all the way down", () => {
    const options = lookup({ prefix: "p", tags: ["a"] }).options as {
      prefix: string;
      tags: string[];
      nested: { upper: boolean };
    };
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.tags)).toBe(true);
    expect(Object.isFrozen(options.nested)).toBe(true);
    expect(() => {
      options.nested.upper = true;
    }).toThrow(TypeError);
    expect(() => options.tags.push("b")).toThrow(TypeError);
  });

  it("leaves class instances passed as options mutable (they are resources, not data)", () => {
    const withPool = tool({
      name: "pooled",
      description: "",
      input: z.object({}),
      options: z.object({ cache: z.instanceof(Map) }),
      run: noop,
    });
    const cache = new Map<string, string>();
    const placed = withPool({ cache });
    expect(Object.isFrozen(placed.options)).toBe(true);
    expect(Object.isFrozen(cache)).toBe(false);
    cache.set("k", "v");
    expect(cache.get("k")).toBe("v");
  });

  it("throws invalid_options with the zod issues when options fail the schema", () => {
    let caught: unknown;
    try {
      lookup({ prefix: 42 as unknown as string });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: "invalid_options" });
    expect((caught as { details: unknown }).details).toEqual([
      expect.objectContaining({ code: "invalid_type", path: ["prefix"] }),
    ]);
  });

  it("throws invalid_options when required options are missing", () => {
    // @ts-expect-error the options schema requires `prefix`
    expect(() => lookup()).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it("throws invalid_options for an asynchronous options schema (factories are synchronous)", () => {
    const asyncOptions = tool({
      name: "slow",
      description: "",
      input: z.object({}),
      options: z.object({ a: z.string().refine(async () => true) }),
      run: noop,
    });
    expect(() => asyncOptions({ a: "x" })).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it("takes `env` out of the options before parsing, even with a strict options schema", () => {
    const placed = lookup({ env: hostEnv({ name: "app" }), prefix: "p" });
    expect(placed.env).toEqual({ type: "host", name: "app" });
    expect(placed.placement.env).toEqual({ type: "host", name: "app" });
    expect(placed.options).not.toHaveProperty("env");
  });

  describe("without an options schema", () => {
    const plain = tool({ name: "plain", description: "", input: z.object({}), run: noop });

    it("accepts lookup() and lookup({ env })", () => {
      expect(plain().env).toEqual({ type: "host", name: "application" });
      expect(plain({ env: hostEnv({ name: "worker-1" }) }).env).toEqual({ type: "host", name: "worker-1" });
      expect(plain().options).toEqual({});
      expect(Object.isFrozen(plain().options)).toBe(true);
    });

    it("refuses any other option with invalid_options", () => {
      // @ts-expect-error this tool declares no options
      expect(() => plain({ prefix: "x" })).toThrow(expect.objectContaining({ code: "invalid_options" }));
    });
  });

  it("refuses an env that does not come from hostEnv, and hostEnv refuses bad names", () => {
    expect(() => lookup({ env: { type: "brain", name: "x" } as never, prefix: "p" })).toThrow(
      expect.objectContaining({ code: "invalid_options" }),
    );
    expect(() => hostEnv({ name: "no spaces" })).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it("refuses, when creating a session, objects that were not made by a factory", () => {
    expect(() => runtimeOf({ ...lookup({ prefix: "p" }) })).toThrow(expect.objectContaining({ code: "invalid_tool" }));
  });
});
