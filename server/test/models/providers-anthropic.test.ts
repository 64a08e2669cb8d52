import { describe, expect, it } from "vitest";
import { context, failure, fakeProviderSuite, hello, KEY, provider } from "./providers-support.js";

const { fake, model: anthropic, lastBody } = fakeProviderSuite("anthropic");

describe("Anthropic request", () => {
  it("sends a minimal streaming body to /v1/messages with its key and version headers", async () => {
    const request = await lastBody(hello);
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["x-api-key"]).toBe(KEY);
    expect(request.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers.authorization).toBeUndefined();
    // max_tokens is required by the API: 4096 unless the request or configuration says otherwise.
    expect(request.body).toEqual({
      model: "test-model",
      max_tokens: 4096,
      // The conversation's last block is a prompt-cache breakpoint: the next call reads its prefix.
      messages: [{ role: "user", content: [{ type: "text", text: "hello", cache_control: { type: "ephemeral" } }] }],
      stream: true,
    });
  });

  it("takes max_tokens from the request, else from the configuration", async () => {
    expect((await lastBody({ ...hello, maxTokens: 7 }, { maxTokens: 99 })).body.max_tokens).toBe(7);
    expect((await lastBody(hello, { maxTokens: 99 })).body.max_tokens).toBe(99);
  });

  it("maps tool calls to tool_use blocks and tool results to user tool_result blocks, merging roles", async () => {
    const request = await lastBody({
      system: "be brief",
      messages: [
        { role: "user", content: "first" },
        { role: "user", content: "second" },
        { role: "assistant", content: "", toolCalls: [{ id: "t1", name: "search", input: { q: "x" } }] },
        { role: "tool", toolCallId: "t1", name: "search", content: "found" },
        { role: "user", content: "and?" },
        {
          role: "assistant",
          content: "checking",
          toolCalls: [
            { id: "t2", name: "a", input: {} },
            { id: "t3", name: "b", input: { n: 1 } },
          ],
        },
        { role: "tool", toolCallId: "t2", name: "a", content: "A" },
        { role: "tool", toolCallId: "t3", name: "b", content: "B" },
        { role: "assistant", content: "done" },
        { role: "assistant", content: "really" },
      ],
      tools: [{ name: "search", description: "searches", inputSchema: { type: "object" } }],
    });
    // Prompt caching: breakpoints on the system prompt, the last tool and the last block.
    expect(request.body.system).toEqual([{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }]);
    expect(request.body.tools).toEqual([
      {
        name: "search",
        description: "searches",
        input_schema: { type: "object" },
        cache_control: { type: "ephemeral" },
      },
    ]);
    expect(request.body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "first" },
          { type: "text", text: "second" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "search", input: { q: "x" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "found" },
          { type: "text", text: "and?" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "checking" },
          { type: "tool_use", id: "t2", name: "a", input: {} },
          { type: "tool_use", id: "t3", name: "b", input: { n: 1 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t2", content: "A" },
          { type: "tool_result", tool_use_id: "t3", content: "B" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "done" },
          { type: "text", text: "really", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });

  it("omits an empty system prompt and asks for JSON in the system prompt when requested", async () => {
    expect((await lastBody({ ...hello, system: "" })).body).not.toHaveProperty("system");
    expect((await lastBody({ ...hello, responseFormat: { type: "text" } })).body).not.toHaveProperty("system");

    const systemText = (body: Record<string, unknown>) => (body.system as { text: string }[])[0]!.text;
    const plain = systemText((await lastBody({ ...hello, responseFormat: { type: "json" } })).body);
    expect(plain).toMatch(/JSON value/);
    const schema = { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] };
    const withSchema = systemText(
      (await lastBody({ ...hello, system: "You count.", responseFormat: { type: "json", schema } })).body,
    );
    expect(withSchema.startsWith("You count.\n\n")).toBe(true);
    expect(withSchema).toContain(JSON.stringify(schema));
    // The Messages API has no response_format field.
    expect(fake.requests.at(-1)!.body).not.toHaveProperty("response_format");
  });

  it("does not double a /v1 base URL and accepts a trailing slash", async () => {
    for (const base of [`${fake.url}/v1`, `${fake.url}/v1/`, `${fake.url}/`]) {
      const before = fake.requests.length;
      expect((await provider("anthropic", base).complete(hello, context())).text).toBe("ok");
      expect(fake.requests[before]!.path).toBe("/v1/messages");
    }
  });
});

describe("Anthropic answer", () => {
  it("assembles streamed text, usage, model and stop reason", async () => {
    const text = "Hello, streaming world! ünïcødé 🎉 done";
    fake.reply({ text, pieceChars: 2, usage: { input: 12, output: 34 }, model: "claude-answered" });
    expect(await anthropic().complete(hello, context())).toEqual({
      text,
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 34 },
      stopReason: "end",
      model: "claude-answered",
    });
  });

  it("counts prompt-cache reads and writes as input, and keeps them apart (streamed and JSON)", async () => {
    for (const json of [false, true]) {
      fake.reply({ text: "cached", json, usage: { input: 20, output: 5, cacheRead: 3000, cacheWrite: 400 } });
      expect((await anthropic().complete(hello, context())).usage).toEqual({
        inputTokens: 3420,
        outputTokens: 5,
        cachedInputTokens: 3000,
        cacheWriteInputTokens: 400,
      });
    }
  });

  it("assembles tool_use blocks whose input arrives in pieces", async () => {
    fake.reply({
      text: "calling",
      pieceChars: 4,
      toolCalls: [
        { id: "toolu_a", name: "search", input: { query: "a long query string", limit: 10 } },
        { id: "toolu_b", name: "fetch", input: { url: "https://example.com/x?y=1" } },
        { id: "toolu_c", name: "now", arguments: "" },
      ],
    });
    const answer = await anthropic().complete(hello, context());
    expect(answer.text).toBe("calling");
    expect(answer.stopReason).toBe("tool_calls");
    expect(answer.toolCalls).toEqual([
      { id: "toolu_a", name: "search", input: { query: "a long query string", limit: 10 } },
      { id: "toolu_b", name: "fetch", input: { url: "https://example.com/x?y=1" } },
      { id: "toolu_c", name: "now", input: {} },
    ]);
  });

  it("maps stop reasons", async () => {
    fake.reply({ stopReason: "max_tokens" }, { stopReason: "stop_sequence" }, { stopReason: "refusal" });
    expect((await anthropic().complete(hello, context())).stopReason).toBe("max_tokens");
    expect((await anthropic().complete(hello, context())).stopReason).toBe("end");
    expect((await anthropic().complete(hello, context())).stopReason).toBe("other");
  });

  it("fails with model_error on tool input that is not JSON", async () => {
    fake.reply({ toolCalls: [{ name: "search", arguments: '{"q": ' }] });
    const error = await failure(anthropic().complete(hello, context()));
    expect(error.code).toBe("model_error");
  });

  it("maps error events mid-stream to their codes", async () => {
    const cases = [
      ["overloaded_error", "model_unavailable"],
      ["api_error", "model_unavailable"],
      ["rate_limit_error", "model_rate_limited"],
      ["authentication_error", "model_auth_failed"],
      ["permission_error", "model_auth_failed"],
      ["invalid_request_error", "model_bad_request"],
      ["not_found_error", "model_bad_request"],
      ["something_new", "model_error"],
    ] as const;
    for (const [type, code] of cases) {
      fake.reply({ kind: "stream-error", text: "partial answer", error: { type, message: `the ${type} happened` } });
      const error = await failure(anthropic().complete(hello, context()));
      expect(error.code).toBe(code);
      expect(error.message).toContain(`the ${type} happened`);
    }
  });

  it("reads a non-streaming JSON answer", async () => {
    fake.reply({
      json: true,
      text: "plain",
      toolCalls: [{ id: "j1", name: "search", input: { q: 1 } }],
      usage: { input: 3, output: 4 },
      model: "json-model",
    });
    expect(await anthropic().complete(hello, context())).toEqual({
      text: "plain",
      toolCalls: [{ id: "j1", name: "search", input: { q: 1 } }],
      usage: { inputTokens: 3, outputTokens: 4 },
      stopReason: "tool_calls",
      model: "json-model",
    });
  });

  it("ignores pings and unknown blocks, keeps thinking, and falls back to the configured model and zero usage", async () => {
    const event = (type: string, value: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;
    fake.reply({
      kind: "raw",
      chunks: [
        event("message_start", { message: { content: [] } }),
        ": comment\n\n",
        event("ping", {}),
        event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "" } }),
        event("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }),
        event("content_block_stop", { index: 0 }),
        event("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
        event("content_block_delta", { index: 1, delta: { type: "text_delta", text: "vis" } }),
        event("content_block_delta", { index: 1, delta: { type: "text_delta", text: "ible" } }),
        event("content_block_stop", { index: 1 }),
        event("content_block_start", { index: 2, content_block: { type: "some_future_block", x: 1 } }),
        event("content_block_stop", { index: 2 }),
        event("message_delta", { delta: { stop_reason: "end_turn" } }),
        event("message_stop", {}),
      ],
    });
    expect(await anthropic().complete(hello, context())).toEqual({
      text: "visible",
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      stopReason: "end",
      model: "test-model",
      reasoning: "hmm",
      thinking: [{ type: "thinking", thinking: "hmm", signature: "" }],
    });
  });
});
