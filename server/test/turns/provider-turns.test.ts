// A tool-calling turn through a Brain server for each provider reached through the AI SDK's
// packages, against its local fake: the session's model calls go to the fake's wire format, the
// tool runs, the answer comes back, and the journal holds the calls with their usage; sessions.model
// shows the configuration without its credentials. Invalid configurations are refused at creation.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AI_PROVIDER_KINDS } from "../../../testkit/ai-provider-kinds.js";
import { expectError, request } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { journalOf } from "../../../testkit/tool-harness.js";

const SECRET = "provider-secret-0123456789abcdef";
let server: InProcessBrain;
let brain: Brain;

beforeAll(async () => {
  server = await startBrain();
  brain = new Brain({ url: server.url, token: server.token });
});
afterAll(async () => {
  await brain?.close();
  await server?.close();
});

const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  input: z.object({ city: z.string() }),
  run: async ({ city }, ctx) => ctx.finish({ city, sky: "clear" }),
});

describe.each(AI_PROVIDER_KINDS)("a turn on $provider", (kind) => {
  it("calls the tool the model asks for and answers with the model's text", async () => {
    const fake = await kind.start(kind.presented(SECRET));
    try {
      fake.reply(
        { text: "Checking.", toolCalls: [{ id: "call_1", name: "weather", input: { city: "Oslo" } }] },
        { text: "Clear skies in Oslo." },
      );
      const session = await brain.sessions.create({ model: kind.config(fake.url, SECRET), tools: [weather()] });
      await expect(session.send("weather in Oslo?")).resolves.toBe("Clear skies in Oslo.");
      expect(fake.requests).toHaveLength(2);
      // The second request carried the tool's result back in the provider's own shape.
      expect(JSON.stringify(fake.requests[1]!.body)).toContain("clear");

      const journal = await journalOf(server.db.sql, session.id);
      const ended = journal.filter((r) => r.kind === "model_call_ended").map((r) => r.payload);
      expect(ended).toHaveLength(2);
      expect(ended[0]).toMatchObject({
        outcome: { status: "ok" },
        response: { text: "Checking.", toolCalls: [{ name: "weather", input: { city: "Oslo" } }] },
        usage: { inputTokens: 10, outputTokens: 5 },
      });
      const result = journal.find((r) => r.kind === "tool_call_ended")!.payload;
      expect(result).toMatchObject({ outcome: { status: "ok", value: { city: "Oslo", sky: "clear" } } });
      const [row] = await server.db.sql<{ model: Record<string, unknown> }[]>`
        SELECT model FROM brain.sessions WHERE id = ${session.id}`;
      expect(row!.model.provider).toBe(kind.provider);
      expect(JSON.stringify(row!.model)).not.toContain(SECRET);
      for (const field of ["apiKey", "secretAccessKey", "accessKeyId", "sessionToken"]) {
        expect(row!.model).not.toHaveProperty(field);
      }
    } finally {
      await fake.close();
    }
  });
});

describe("a tool's model call (ctx.model)", () => {
  it("is retried like the loop's: one model_call_ended of the tool with both attempts", async () => {
    const kind = AI_PROVIDER_KINDS.find((k) => k.provider === "google")!;
    const fake = await kind.start(kind.presented(SECRET));
    try {
      const ask = tool({
        name: "ask",
        description: "Asks the model.",
        input: z.object({}),
        run: async (_input, ctx) => {
          const r = await ctx.model({ messages: [{ role: "user", content: "and you?" }] });
          return ctx.finish({ said: r.text });
        },
      });
      fake.reply(
        { toolCalls: [{ name: "ask", input: {} }] },
        { kind: "error", status: 503, message: "busy", headers: { "retry-after": "0" } },
        { text: "fine" },
        { text: "done" },
      );
      const session = await brain.sessions.create({ model: kind.config(fake.url, SECRET), tools: [ask()] });
      await expect(session.send("go")).resolves.toBe("done");
      const journal = await journalOf(server.db.sql, session.id);
      const ofTool = journal.filter(
        (r) => r.kind === "model_call_ended" && (r.payload.origin as { type?: string } | undefined)?.type === "tool",
      );
      expect(ofTool).toHaveLength(1);
      expect(ofTool[0]!.payload).toMatchObject({
        outcome: { status: "ok" },
        response: { text: "fine" },
        attempts: [{ status: 503, error: { code: "model_unavailable" }, waitMs: 0 }, { status: 200 }],
      });
    } finally {
      await fake.close();
    }
  });
});

describe("provider configurations", () => {
  it("refuses what cannot be used, naming the field, and creates nothing", async () => {
    const [before] = await server.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.sessions`;
    for (const model of [
      { provider: "bedrock", name: "m", region: "us-east-1" },
      {
        provider: "bedrock",
        name: "m",
        region: "us-east-1",
        apiKey: "k",
        accessKeyId: "AKIA0000000000000000",
        secretAccessKey: "s",
      },
      { provider: "bedrock", name: "m", region: "nowhere", apiKey: "k" },
      { provider: "bedrock", name: "m", region: "us-east-1", apiKey: "k", sessionToken: "t" },
      { provider: "azure", name: "deployment", apiKey: "k" },
      { provider: "openai-compatible", name: "m", apiKey: "k" },
      { provider: "google", name: "m" },
      { provider: "gemini", name: "m", apiKey: "k" },
    ]) {
      expectError(await request(server, "POST", "/v1/sessions", { body: { model } }), "invalid_request");
    }
    const [after] = await server.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.sessions`;
    expect(after!.n).toBe(before!.n);
  });
});
