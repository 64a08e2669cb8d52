// "Packaged factories carry their executable reference": a component tool's factory exposes the
// Component it runs (brain-tools check reads it), other tools expose none.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Component, component, tool } from "../../src/index.js";

describe("tool.component", () => {
  it("is the component of a component tool, resolved against the declaring module", () => {
    const wasm = component(new URL("./word-count.wasm", import.meta.url));
    const counted = tool({ name: "count", description: "d", input: z.object({}), implementation: wasm });
    expect(counted.component).toBe(wasm);
    expect(counted.component).toBeInstanceOf(Component);
    expect(counted.component?.url.href).toBe(new URL("./word-count.wasm", import.meta.url).href);
  });

  it("is undefined for run tools and descriptor tools", () => {
    const input = z.object({});
    expect(tool({ name: "ran", description: "d", input, run: () => null }).component).toBeUndefined();
    const described = tool({ name: "described", description: "d", input, implementation: () => ({ type: "x" }) });
    expect(described.component).toBeUndefined();
  });
});
