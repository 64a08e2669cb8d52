import { describe, expect, it } from "vitest";
import { context, failure, fakeProviderSuite, hello, KEY, provider } from "./providers-support.js";

const { fake, model: openai, lastBody } = fakeProviderSuite("openai");

describe("OpenAI request", () => {
  it("sends a minimal streaming body to /chat/completions with a bearer key", async () => {
    const request = await lastBody(hello);
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers["content-type"]).toBe("application/json");
    // No system message, tools, token limit or response format unless asked for.
    expect(request.body).toEqual({
      model: "test-model",
      messages: [{ role: "user", content: "hello" }],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("maps the system prompt, tool calls, tool results and tools", async () => {
    const request = await lastBody({
      system: "be brief",
      messages: [
        { role: "user", content: "find x" },
        { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "search", input: { q: "x" } }] },
        { role: "tool", toolCallId: "c1", name: "search", content: "found" },
        { role: "assistant", content: "it is", toolCalls: [{ id: "c2", name: "more", input: [1, "two"] }] },
      ],
      tools: [{ name: "search", description: "searches", inputSchema: { type: "object" } }],
    });
    expect(request.body.messages).toEqual([
      { role: "system", content: "be brief" },
      { role: "user", content: "find x" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "search", arguments: '{"q":"x"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "found" },
      {
        role: "assistant",
        content: "it is",
        tool_calls: [{ id: "c2", type: "function", function: { name: "more", arguments: '[1,"two"]' } }],
      },
    ]);
    expect(request.body.tools).toEqual([
      { type: "function", function: { name: "search", description: "searches", parameters: { type: "object" } } },
    ]);
  });

  it("omits an empty system prompt", async () => {
    const request = await lastBody({ ...hello, system: "" });
    expect(request.body.messages).toEqual([{ role: "user", content: "hello" }]);
  });

  it("sends max_tokens from the request, else from the configuration", async () => {
    expect((await lastBody({ ...hello, maxTokens: 7 }, { maxTokens: 99 })).body.max_tokens).toBe(7);
    expect((await lastBody(hello, { maxTokens: 99 })).body.max_tokens).toBe(99);
  });

  it("asks for JSON output only when requested", async () => {
    expect((await lastBody({ ...hello, responseFormat: { type: "text" } })).body).not.toHaveProperty("response_format");
    expect((await lastBody({ ...hello, responseFormat: { type: "json" } })).body.response_format).toEqual({
      type: "json_object",
    });
    const schema = { type: "object", properties: { a: { type: "number" } } };
    expect((await lastBody({ ...hello, responseFormat: { type: "json", schema } })).body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", schema },
    });
  });

  it("accepts a base URL with a trailing slash", async () => {
    const before = fake.requests.length;
    const answer = await provider("openai", `${fake.url}/`).complete(hello, context());
    expect(answer.text).toBe("ok");
    expect(fake.requests[before]!.path).toBe("/v1/chat/completions");
  });
});

describe("OpenAI answer", () => {
  it("reports the prompt tokens OpenAI read from its cache (streamed and JSON)", async () => {
    for (const json of [false, true]) {
      fake.reply({ text: "cached", json, usage: { input: 3000, output: 5, cacheRead: 2048 } });
      expect((await openai().complete(hello, context())).usage).toEqual({
        inputTokens: 3000,
        outputTokens: 5,
        cachedInputTokens: 2048,
      });
    }
  });

  it("keeps the reasoning a compatible server sends apart (reasoning_content), streamed and JSON", async () => {
    for (const json of [false, true]) {
      fake.reply({ text: "42", json, reasoning: "six times seven, carefully" });
      const answer = await openai().complete(hello, context());
      expect({ text: answer.text, reasoning: answer.reasoning }).toEqual({
        text: "42",
        reasoning: "six times seven, carefully",
      });
    }
    fake.reply({ text: "plain" });
    expect(await openai().complete(hello, context())).not.toHaveProperty("reasoning");
  });

  it("assembles streamed text, usage, model and stop reason", async () => {
    const text = "Hello, streaming world! ünïcødé 🎉 done";
    fake.reply({ text, pieceChars: 2, usage: { input: 12, output: 34 }, model: "gpt-answered" });
    const answer = await openai().complete(hello, context());
    expect(answer).toEqual({
      text,
      toolCalls: [],
      usage: { inputTokens: 12, outputTokens: 34 },
      stopReason: "end",
      model: "gpt-answered",
    });
  });

  it("assembles tool calls whose arguments arrive in pieces", async () => {
    fake.reply({
      text: "calling",
      pieceChars: 4,
      toolCalls: [
        { id: "call_a", name: "search", input: { query: "a long query string", limit: 10 } },
        { id: "call_b", name: "fetch", input: { url: "https://example.com/x?y=1" } },
      ],
    });
    const answer = await openai().complete(hello, context());
    expect(answer.text).toBe("calling");
    expect(answer.stopReason).toBe("tool_calls");
    expect(answer.toolCalls).toEqual([
      { id: "call_a", name: "search", input: { query: "a long query string", limit: 10 } },
      { id: "call_b", name: "fetch", input: { url: "https://example.com/x?y=1" } },
    ]);
  });

  it("reads empty tool arguments as an empty object", async () => {
    fake.reply({ toolCalls: [{ name: "now", arguments: "" }] });
    const answer = await openai().complete(hello, context());
    expect(answer.toolCalls).toEqual([{ id: expect.any(String), name: "now", input: {} }]);
  });

  it("maps finish reasons", async () => {
    fake.reply({ stopReason: "length" }, { stopReason: "content_filter" });
    expect((await openai().complete(hello, context())).stopReason).toBe("max_tokens");
    expect((await openai().complete(hello, context())).stopReason).toBe("other");
  });

  it("fails with model_error on tool arguments that are not JSON", async () => {
    fake.reply({ toolCalls: [{ name: "search", arguments: '{"q": "unterminated' }] });
    const error = await failure(openai().complete(hello, context()));
    expect(error.code).toBe("model_error");
    expect(error.message).toContain("search");
  });

  it("reads a non-streaming JSON answer from a server that ignores stream", async () => {
    fake.reply({
      json: true,
      text: "plain",
      toolCalls: [{ id: "j1", name: "search", input: { q: 1 } }],
      usage: { input: 3, output: 4 },
      model: "json-model",
    });
    const answer = await openai().complete(hello, context());
    expect(answer).toEqual({
      text: "plain",
      toolCalls: [{ id: "j1", name: "search", input: { q: 1 } }],
      usage: { inputTokens: 3, outputTokens: 4 },
      stopReason: "tool_calls",
      model: "json-model",
    });
  });

  it("parses CRLF streams, comments, multi-line data, events split anywhere, and missing usage and model", async () => {
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data:${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\r\n\r\n`;
    const body = [
      ": keep-alive\r\n\r\n",
      chunk({ role: "assistant", content: "ab" }),
      // One event's data over two lines: joined with "\n", which JSON reads as whitespace.
      'data: {"choices":\r\ndata: [{"index":0,"delta":{"content":"c€d"},"finish_reason":null}]}\r\n\r\n',
      chunk({ tool_calls: [{ index: 0, id: "t", function: { name: "f", arguments: '{"k"' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ":true}" } }] }),
      chunk({}, "tool_calls"),
      "data: [DONE]\r\n\r\n",
    ].join("");
    // Cut every 7 bytes, and between the \r and \n of the multi-line event, so line breaks, field
    // names and a UTF-8 sequence straddle writes.
    const bytes = Buffer.from(body);
    const cut = bytes.indexOf('{"choices":\r') + '{"choices":\r'.length;
    const chunks: Buffer[] = [];
    for (let i = 0; i < cut; i += 7) chunks.push(bytes.subarray(i, Math.min(i + 7, cut)));
    for (let i = cut; i < bytes.length; i += 7) chunks.push(bytes.subarray(i, i + 7));
    fake.reply({ kind: "raw", chunks, chunkDelayMs: 1 });
    const answer = await openai().complete(hello, context());
    expect(answer).toEqual({
      text: "abc€d",
      toolCalls: [{ id: "t", name: "f", input: { k: true } }],
      usage: { inputTokens: 0, outputTokens: 0 },
      stopReason: "tool_calls",
      model: "test-model",
    });
  });
});
