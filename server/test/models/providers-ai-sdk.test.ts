// The providers Brain reaches through the AI SDK's packages (Google Gemini, OpenAI Responses,
// OpenAI-compatible servers, Azure OpenAI, Amazon Bedrock), each against a local fake speaking its
// wire format: a tool-calling answer with live text and usage, a conversation with tool results,
// retries of 429s, and failures with the documented codes and no secret in any message.
import { ModelConfigSchema } from "@aexhq/brain-contracts";
import { createProvider, type ModelAttempt, type ProviderRequest } from "@aexhq/brain-core/models";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AI_PROVIDER_KINDS } from "../../../testkit/ai-provider-kinds.js";
import { loopbackEgress } from "../../../testkit/egress.js";
import type { FakeProvider } from "../../../testkit/fake-providers.js";
import { context, failure, hello, KEY } from "./providers-support.js";

const transport = { fetch: loopbackEgress().fetch, maxAnswerBytes: 16 * 1024 * 1024 };

describe.each(AI_PROVIDER_KINDS)("$provider", (kind) => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await kind.start(kind.presented(KEY));
  });
  afterAll(async () => {
    await fake?.close();
  });
  const model = (extra: Record<string, unknown> = {}) =>
    createProvider(ModelConfigSchema.parse({ ...kind.config(fake.url, KEY), ...extra }), transport);

  it("answers a tool-calling request: its tools on the wire, the calls, the usage, the text live", async () => {
    fake.reply({ text: "Let me look.", toolCalls: [{ id: "call_7", name: "search", input: { q: "x" } }] });
    const before = fake.requests.length;
    const pieces: string[] = [];
    const request: ProviderRequest = {
      system: "be brief",
      messages: [{ role: "user", content: "find x" }],
      tools: [{ name: "search", description: "searches", inputSchema: { type: "object", properties: {} } }],
    };
    const answer = await model().complete(request, { ...context(), onText: (t) => pieces.push(t) });
    expect(answer.text).toBe("Let me look.");
    expect(pieces.join("")).toBe("Let me look.");
    expect(pieces.length).toBeGreaterThan(1);
    expect(answer.toolCalls).toEqual([
      { id: kind.keepsCallIds ? "call_7" : expect.any(String), name: "search", input: { q: "x" } },
    ]);
    expect(answer.stopReason).toBe("tool_calls");
    expect(answer.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    const wire = JSON.stringify(fake.requests[before]!.body);
    for (const part of ["search", "searches", "find x", "be brief"]) expect(wire).toContain(part);
  });

  it("sends a conversation with tool calls and their results, and reads a plain answer", async () => {
    fake.reply({ text: "It is x." });
    const before = fake.requests.length;
    const answer = await model().complete(
      {
        messages: [
          { role: "user", content: "find x" },
          { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "search", input: { q: "x" } }] },
          { role: "tool", toolCallId: "c1", name: "search", content: "found: x" },
        ],
        tools: [{ name: "search", description: "searches", inputSchema: { type: "object" } }],
      },
      context(),
    );
    expect(answer).toMatchObject({ text: "It is x.", toolCalls: [], stopReason: "end" });
    expect(JSON.stringify(fake.requests[before]!.body)).toContain("found: x");
  });

  it("a 429 twice with retry-after, then an answer: one call, three attempts", async () => {
    fake.reply(
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } },
      { kind: "error", status: 429, message: "slow down", headers: { "retry-after": "0" } },
      { text: "at last" },
    );
    const attempts: ModelAttempt[] = [];
    const answer = await model().complete(hello, { ...context(), attempts });
    expect(answer.text).toBe("at last");
    expect(attempts.map((a) => a.status)).toEqual([429, 429, 200]);
    expect(attempts[0]).toMatchObject({ error: { code: "model_rate_limited" }, waitMs: 0 });
  });

  it("fails with the documented codes, and never names a secret", async () => {
    fake.reply({ kind: "error", status: 400, message: "bad things" });
    expect(await failure(model().complete(hello, context()))).toMatchObject({ code: "model_bad_request", status: 400 });
    fake.reply({ kind: "error", status: 503, message: "down" });
    expect(await failure(model({ maxAttempts: 1 }).complete(hello, context()))).toMatchObject({
      code: "model_unavailable",
    });
    // A fake expecting another key refuses ours, and its message quotes what was presented.
    const strict = await kind.start("another-key-entirely");
    try {
      const config = { ...kind.config(strict.url, KEY), maxAttempts: 1 };
      const refused = await failure(createProvider(config, transport).complete(hello, context()));
      expect(refused.code).toBe("model_auth_failed");
      expect(refused.message).not.toContain(KEY);
    } finally {
      await strict.close();
    }
  });

  it("a conversation past the context window is model_context_exceeded", async () => {
    const message =
      kind.provider === "google"
        ? "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        : kind.provider === "bedrock"
          ? "Input is too long for requested model."
          : "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.";
    fake.reply({ kind: "error", status: 400, message });
    const error = await failure(model().complete(hello, context()));
    expect(error.code).toBe("model_context_exceeded");
    if (kind.provider === "google") expect(error.context).toEqual({ tokens: 1200000, window: 1048576 });
  });

  it("a stream cut short is model_error and is not retried", async () => {
    fake.reply({ kind: "truncated", text: "half" }, { text: "must not be asked for" });
    const before = fake.requests.length;
    const error = await failure(model().complete(hello, context()));
    expect(error.code).toBe("model_error");
    expect(fake.requests.length - before).toBe(1);
    expect((await model().complete(hello, context())).text).toBe("must not be asked for");
  });
});
