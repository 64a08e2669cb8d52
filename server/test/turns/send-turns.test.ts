// session.send() answers a turn of any length and never reads a failed turn as an empty answer:
// the SDK posts the message (answered at once) and follows the journal until the activation ends,
// resuming the stream whenever a request is cut. A real Brain, the public SDK, undici's own fetch
// with short timeouts, a fake OpenAI for provider failures.
import { Brain, type BrainError, tool } from "@aexhq/brain";
import { Agent, fetch as undiciFetch } from "undici";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { request } from "../../../testkit/api.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { callsThenDone, deferred, journalOf, serverAndClient, until } from "../../../testkit/tool-harness.js";

const MAX_MODEL_CALLS = 2;
const { server, client: brain } = serverAndClient({ BRAIN_MAX_MODEL_CALLS: String(MAX_MODEL_CALLS) });
const openai = startedBeforeAll(() => startFakeOpenAI());

/** The activation_ended records of a session, in order. */
async function endings(sessionId: string) {
  return (await journalOf(server.db.sql, sessionId)).filter((r) => r.kind === "activation_ended");
}

const rejection = (turn: Promise<string>) =>
  turn.then(
    (text) => {
      throw new Error(`the turn resolved with ${JSON.stringify(text)}`);
    },
    (error: unknown) => error as BrainError,
  );

describe("session.send: long turns", () => {
  it("resolves with the final text of a turn longer than the client's header and body timeouts", async () => {
    const TIMEOUT_MS = 2_000;
    // undici's defaults are 300 s; these are what a turn of ten minutes looks like to them.
    const agent = new Agent({ headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
    const requests: string[] = [];
    const timed = (async (input: string, init: RequestInit) => {
      requests.push(`${init.method} ${new URL(input).pathname}`);
      return undiciFetch(input, { ...(init as object), dispatcher: agent });
    }) as unknown as typeof fetch;
    const client = new Brain({ url: server.url, token: server.token, fetch: timed });
    let started = 0;
    const slow = tool({
      name: "slow",
      description: "Takes longer than the client's timeouts.",
      input: z.object({}),
      run: async (_input, ctx) => {
        started = Date.now();
        // The point of the test is a turn that lasts: two body timeouts and more without a record.
        await new Promise((resolve) => setTimeout(resolve, 2.5 * TIMEOUT_MS));
        return ctx.finish({ slept: true });
      },
    });
    try {
      const session = await client.sessions.create({
        model: callsThenDone({ name: "slow", input: {} }),
        tools: [slow()],
      });
      const began = Date.now();
      await expect(session.send("go")).resolves.toBe("done");
      expect(started).toBeGreaterThan(0);
      expect(Date.now() - began).toBeGreaterThan(2 * TIMEOUT_MS);
      // The wait outlived the timeouts by resuming the event stream, not by one long request.
      const streams = requests.filter((r) => r === `GET /v1/sessions/${session.id}/events`);
      expect(streams.length).toBeGreaterThanOrEqual(2);
    } finally {
      await client.close();
      await agent.close();
    }
  });

  it("an idempotent send answers the same turn again, even after it ended", async () => {
    const session = await brain.sessions.create({ model: { provider: "scripted", script: [{ text: "once" }] } });
    await expect(session.send("hello", { idempotencyKey: "k-1" })).resolves.toBe("once");
    await expect(session.send("hello", { idempotencyKey: "k-1" })).resolves.toBe("once");
    expect((await journalOf(server.db.sql, session.id)).filter((r) => r.kind === "user_message")).toHaveLength(1);
  });
});

describe("session.send: a failed turn rejects with its error code", () => {
  it("model_budget_exceeded: the journal and the wait:true answer carry the code too", async () => {
    const quick = tool({
      name: "quick",
      description: "Answers at once.",
      input: z.object({}),
      run: async () => ({ ok: true }),
    });
    const loop = { toolCalls: [{ name: "quick", input: {} }] };
    const session = await brain.sessions.create({
      model: { provider: "scripted", script: [loop, loop, loop, loop, loop, loop] },
      tools: [quick()],
    });
    const error = await rejection(session.send("go"));
    expect(error).toMatchObject({ name: "BrainError", code: "model_budget_exceeded" });
    expect(error.message).toMatch(/BRAIN_MAX_MODEL_CALLS/);
    const [ended] = await endings(session.id);
    expect(ended?.payload).toMatchObject({ status: "failed", error: { code: "model_budget_exceeded" } });
    // Other clients still may hold the request open (wait: true); the answer says why it failed.
    const answer = await request(server, "POST", `/v1/sessions/${session.id}/messages`, {
      body: { text: "again", wait: true },
    });
    expect(answer.status).toBe(201);
    expect(answer.json).toMatchObject({
      activation: { status: "failed", text: "", error: { code: "model_budget_exceeded" } },
    });
  });

  it("a provider failure: the provider's code (model_rate_limited)", async () => {
    openai.reply({ kind: "error", status: 429, message: "slow down" });
    const session = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url, maxAttempts: 1 },
    });
    const error = await rejection(session.send("go"));
    expect(error).toMatchObject({ name: "BrainError", code: "model_rate_limited" });
    const [ended] = await endings(session.id);
    expect(ended?.payload).toMatchObject({ status: "failed", error: { code: "model_rate_limited" } });
  });

  it("a rate limit met twice with retry-after, then an answer: one model call of three attempts, the turn completed", async () => {
    openai.reply(
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } },
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } },
      { text: "answered at last" },
    );
    const session = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
    });
    await expect(session.send("go")).resolves.toBe("answered at last");
    const journal = await journalOf(server.db.sql, session.id);
    const calls = journal.filter((r) => r.kind === "model_call_ended");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.payload).toMatchObject({
      outcome: { status: "ok" },
      attempts: [
        { status: 429, error: { code: "model_rate_limited" }, waitMs: 0 },
        { status: 429, error: { code: "model_rate_limited" }, waitMs: 0 },
        { status: 200 },
      ],
    });
    const metrics = await request(server, "GET", "/metrics");
    expect(metrics.text).toMatch(/^brain_model_retries_total\{origin="agentloop"\} [1-9]\d*$/m);
  });

  it("prompt-cache reads and the model's reasoning are journaled, so both show in SQL", async () => {
    openai.reply({ text: "cheap", usage: { input: 3000, output: 5, cacheRead: 2048 }, reasoning: "cache it" });
    const session = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
    });
    await expect(session.send("go")).resolves.toBe("cheap");
    const [row] = await server.db.sql<{ cached: number; input: number; reasoning: string }[]>`
      SELECT (payload->'usage'->>'cachedInputTokens')::int AS cached, (payload->'usage'->>'inputTokens')::int AS input,
             payload->'response'->>'reasoning' AS reasoning
      FROM brain.journal WHERE session_id = ${session.id} AND kind = 'model_call_ended'`;
    expect(row).toEqual({ cached: 2048, input: 3000, reasoning: "cache it" });
  });

  it("past the context window: model_context_exceeded, with the tokens asked and the window", async () => {
    openai.reply({
      kind: "error",
      status: 400,
      body: {
        error: {
          message:
            "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens.",
          type: "invalid_request_error",
          code: "context_length_exceeded",
        },
      },
    });
    const session = await brain.sessions.create({
      model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
    });
    const error = await rejection(session.send("a very long conversation"));
    expect(error).toMatchObject({ code: "model_context_exceeded", details: { tokens: 5000, window: 4096 } });
    const [ended] = await endings(session.id);
    expect(ended?.payload).toMatchObject({
      status: "failed",
      error: { code: "model_context_exceeded", details: { tokens: 5000, window: 4096 } },
    });
  });

  it("turn_cancelled when the turn is cancelled, and when the session ends before it answers", async () => {
    const entered = deferred<void>();
    const hold = tool({
      name: "hold",
      description: "Waits until interrupted.",
      input: z.object({}),
      run: async (_input, ctx) => {
        entered.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
    });
    const cancelled = await brain.sessions.create({
      model: callsThenDone({ name: "hold", input: {} }),
      tools: [hold()],
    });
    const turn = rejection(cancelled.send("go"));
    await entered.promise;
    await cancelled.cancel();
    expect(await turn).toMatchObject({ name: "BrainError", code: "turn_cancelled" });

    const ending = await brain.sessions.create({ model: callsThenDone({ name: "hold", input: {} }), tools: [hold()] });
    const second = rejection(ending.send("go"));
    await until("the call to run", async () =>
      (await journalOf(server.db.sql, ending.id)).some((r) => r.kind === "tool_call_started"),
    );
    await ending.end();
    expect(await second).toMatchObject({ name: "BrainError", code: "turn_cancelled" });
  });
});
