// The Application tool extension served by a Fastify application through fastifyTools: the same
// declarations, the same protocol and the same answers to hostile requests as the Node adapter.
import { fastifyTools, hostEnv, tool } from "@aexhq/brain";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectError, request } from "../../../testkit/api.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { lookupDeclaration, records, runOnce, theCall } from "./http-tools-harness.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
let app: FastifyInstance;
let url: string;

const lookup = tool({
  ...lookupDeclaration,
  run: async ({ id }, ctx) => {
    await ctx.emitResult({ value: `looking up ${id}` });
    return ctx.finish(records.get(`${ctx.options.prefix}${id}`) ?? null);
  },
});

beforeAll(async () => {
  app = Fastify();
  // The application's own JSON routes keep Fastify's parsers; the plugin's context has its own.
  app.post("/other", async (req) => ({ got: req.body }));
  await app.register(fastifyTools([lookup({ prefix: "customer:" })], { brainUrl: stack.brain.url }), {
    prefix: "/tools",
  });
  url = `${await app.listen({ host: "127.0.0.1", port: 0 })}/tools`;
});
afterAll(async () => {
  await app?.close();
});

describe("fastifyTools", () => {
  it("serves the declaration placed with the application's options, results acknowledged durably", async () => {
    const { sessionId } = await runOnce(stack, lookup({ env: hostEnv({ name: "api", url }), prefix: "customer:" }), {
      id: "42",
    });
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.records.map((r) => [r.kind, r.payload.outcome])).toEqual([
      ["tool_result", { status: "ok", value: { value: "looking up 42" } }],
      ["tool_result", { status: "ok", value: { value: "Ada Lovelace" } }],
      ["tool_call_ended", { status: "ok", value: { value: "Ada Lovelace" } }],
    ]);
  });

  it("answers hostile requests with Brain error bodies, leaving the application's other routes alone", async () => {
    const target = { url: url.replace(/\/tools$/, ""), token: "" };
    const post = (path: string, options: Parameters<typeof request>[3]) =>
      request(target, "POST", path, { token: null, ...options });
    // Brain did not sign them: refused before they are read as invocations.
    expectError(await post("/tools", { raw: "{", contentType: "application/json" }), "unauthorized");
    expectError(await post("/tools", { body: { protocol: "brain.tool/1" } }), "unauthorized");
    expectError(await post("/tools", { raw: "hi", contentType: "text/plain" }), "unsupported_media_type");
    const other = await post("/other", { body: { a: 1 } });
    expect(other.json).toEqual({ got: { a: 1 } });
  });
});
