import { describe, expect, expectTypeOf, it } from "vitest";
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
      "payloadOf",
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

describe("journal events, typed by kind", () => {
  it("payloadOf reads an event's payload as its kind's, and nothing of another kind", () => {
    const ended: sdk.JournalEvent = {
      sequence: 7,
      kind: "tool_call_ended",
      payload: { call: 5, outcome: { status: "ok", value: 42 } },
      createdAt: "2026-12-06T00:00:00.000Z",
    };
    const payload = sdk.payloadOf(ended, "tool_call_ended");
    expectTypeOf(payload).toEqualTypeOf<sdk.RecordPayload<"tool_call_ended"> | null>();
    expectTypeOf<sdk.RecordPayload<"tool_call_ended">["call"]>().toEqualTypeOf<number>();
    expect(payload?.outcome.status).toBe("ok");
    expect(sdk.payloadOf(ended, "tool_result")).toBeNull();
    expect(sdk.payloadOf({ ...ended, kind: "lookup_started" }, "tool_call_ended")).toBeNull();
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
    // contracts travels inside the SDK's tarball (scripts/pack.mjs); zod is the application's.
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
