import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as sdk from "../../src/index.js";

describe("the public entry point", () => {
  it("exports exactly the public runtime names", () => {
    expect(Object.keys(sdk).sort()).toEqual([
      "Brain",
      "BrainError",
      "Component",
      "ERROR_CODES",
      "Session",
      "brainEnv",
      "component",
      "fastifyTools",
      "hostEnv",
      "http",
      "httpEnv",
      "httpTool",
      "mcpEnv",
      "mcpTools",
      "tool",
      "toolHandler",
    ]);
  });

  it("re-exports the contract's BrainError, so errors from both processes share one class", async () => {
    const contracts = await import("@aexhq/brain-contracts");
    expect(sdk.BrainError).toBe(contracts.BrainError);
    expect(sdk.ERROR_CODES).toBe(contracts.ERROR_CODES);
  });

  it("runs the spec's application-function example as written", () => {
    const database = { get: async (_key: string): Promise<{ value: string } | null> => null };
    const lookup = sdk.tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.string() }),
      output: z.object({ value: z.string() }).nullable(),
      options: z.object({ prefix: z.string() }),
      run: async ({ id }, ctx) => {
        await ctx.emit("lookup_started", { id });
        return ctx.finish((await database.get(`${ctx.options.prefix}${id}`)) ?? null);
      },
    });
    const placed = lookup({ prefix: "customer:" });
    const named = lookup({ env: sdk.hostEnv({ name: "app" }), prefix: "customer:" });
    expect(placed.options).toEqual({ prefix: "customer:" });
    expect(named.env).toEqual({ type: "host", name: "app" });
  });
});

describe("the SDK's dependencies", () => {
  it("imports nothing of the server, the worker or the database", async () => {
    const { readFileSync, readdirSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { fileURLToPath } = await import("node:url");
    const root = fileURLToPath(new URL("../..", import.meta.url));
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    // contracts travels inside the SDK's tarball (scripts/vendor-contracts.mjs); zod is the application's.
    expect(Object.keys(pkg.dependencies).sort()).toEqual(["ws"]);
    expect(Object.keys(pkg.peerDependencies).sort()).toEqual(["zod"]);
    const allowed = /^(node:|\.\.?\/|@aexhq\/brain-contracts$|ws$|zod$)/;
    const files = readdirSync(join(root, "src"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    for (const file of files) {
      const text = readFileSync(join(root, "src", file), "utf8");
      for (const [, spec] of text.matchAll(/from "([^"]+)"/g)) expect(spec, `${file} imports ${spec}`).toMatch(allowed);
      expect(text).not.toMatch(/import\("(?!node:|\.)/);
    }
  });
});
