// The wire formats of the fake model providers (testkit/fake-providers.ts): how a scripted answer
// is spelled as an OpenAI Chat Completions or Anthropic Messages response, streamed or not.

export interface FakeToolCall {
  /** Default: `call_<request>_<i>` (OpenAI) or `toolu_<request>_<i>` (Anthropic). */
  id?: string;
  name: string;
  /** The arguments as a value; default {}. */
  input?: unknown;
  /** The arguments as raw text, sent as is (e.g. invalid JSON); overrides `input`. */
  arguments?: string;
}

/** A successful answer. */
export interface FakeAnswer {
  kind?: "answer";
  /** Default "ok" when there are no tool calls, "" otherwise. */
  text?: string;
  toolCalls?: FakeToolCall[];
  /**
   * Default { input: 10, output: 5 }: the wire's input count as the provider spells it (Anthropic's
   * input_tokens leave cached tokens out, OpenAI's prompt_tokens count them), and the prompt
   * cache's reads and writes.
   */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** The wire value (e.g. "length", "max_tokens"); default: end of turn, or tool calls when there are some. */
  stopReason?: string;
  /** Default: the request's `model`. */
  model?: string;
  /** OpenAI-compatible servers' `reasoning_content` (DeepSeek, vLLM), streamed before the text. */
  reasoning?: string;
  /** Anthropic's extended thinking: a thinking block (its text, then its signature) before the text. */
  thinking?: { text: string; signature: string };
  /** Answer one JSON document even though the request asked for a stream (servers that ignore `stream`). */
  json?: boolean;
  /** Characters per text or arguments delta; default 3, so every answer spans several events. */
  pieceChars?: number;
  /** Pause between written chunks; default: one event-loop turn. */
  chunkDelayMs?: number;
  /** Streams `after` events, then waits for `until` before the rest (text seen live, say). */
  hold?: { after: number; until: Promise<unknown> };
}

export interface Wire {
  /** Events of a streamed answer, each a complete SSE event text. */
  stream(answer: FakeAnswer, ids: string[], model: string, body: Record<string, unknown>): (string | Uint8Array)[];
  /** The non-streaming answer document. */
  json(answer: FakeAnswer, ids: string[], model: string): unknown;
  /** An error event mid-stream (Anthropic) or an error chunk (OpenAI-compatible servers). */
  streamError(error: { type: string; message: string }): string | Uint8Array;
  /** The provider's error body for an HTTP error status. */
  errorBody(status: number, message: string): unknown;
  /** The first event of a stream (also what a stream that stalls sends before stalling). */
  first(model: string, inputTokens?: number, answer?: FakeAnswer): string | Uint8Array;
  /** The opening events of a streamed text answer, without its end: what a broken stream sends. */
  partial(text: string, model: string): (string | Uint8Array)[];
  idPrefix: string;
}

export const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

export function answerText(answer: FakeAnswer): string {
  return answer.text ?? (answer.toolCalls?.length ? "" : "ok");
}

export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function argumentText(call: FakeToolCall): string {
  return call.arguments ?? JSON.stringify(call.input ?? {});
}

export function usageOf(answer: FakeAnswer): NonNullable<FakeAnswer["usage"]> {
  return answer.usage ?? { input: 10, output: 5 };
}

/** OpenAI's usage object: cached prompt tokens in its details. */
function openAIUsage(answer: FakeAnswer) {
  const { input, output, cacheRead } = usageOf(answer);
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    ...(cacheRead ? { prompt_tokens_details: { cached_tokens: cacheRead } } : {}),
  };
}

/** Anthropic's usage object: cache reads and writes beside input_tokens. */
function anthropicUsage(input: number, output: number, answer?: FakeAnswer) {
  const { cacheRead, cacheWrite } = answer ? usageOf(answer) : {};
  return {
    input_tokens: input,
    output_tokens: output,
    ...(cacheRead ? { cache_read_input_tokens: cacheRead } : {}),
    ...(cacheWrite ? { cache_creation_input_tokens: cacheWrite } : {}),
  };
}

export function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export const openAIWire: Wire = {
  idPrefix: "call",
  first: (model) => data(chunk(model, { role: "assistant", content: "" }, null)),
  stream(answer, ids, model, body) {
    const size = answer.pieceChars ?? 3;
    const calls = answer.toolCalls ?? [];
    const events = [openAIWire.first(model)];
    for (const piece of pieces(answer.reasoning ?? "", size)) {
      events.push(data(chunk(model, { reasoning_content: piece }, null)));
    }
    for (const piece of pieces(answerText(answer), size)) events.push(data(chunk(model, { content: piece }, null)));
    calls.forEach((call, index) => {
      const head = { index, id: ids[index], type: "function", function: { name: call.name, arguments: "" } };
      events.push(data(chunk(model, { tool_calls: [head] }, null)));
      for (const piece of pieces(argumentText(call), size)) {
        events.push(data(chunk(model, { tool_calls: [{ index, function: { arguments: piece } }] }, null)));
      }
    });
    const finish = answer.stopReason ?? (calls.length ? "tool_calls" : "stop");
    events.push(data(chunk(model, {}, finish)));
    const options = body.stream_options as { include_usage?: boolean } | undefined;
    if (options?.include_usage) {
      events.push(
        data({
          ...chunk(model, {}, null),
          choices: [],
          usage: openAIUsage(answer),
        }),
      );
    }
    events.push("data: [DONE]\n\n");
    return events;
  },
  json(answer, ids, model) {
    const calls = answer.toolCalls ?? [];
    const text = answerText(answer);
    return {
      id: "chatcmpl-fake",
      object: "chat.completion",
      created: 0,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: text === "" && calls.length ? null : text,
            ...(answer.reasoning ? { reasoning_content: answer.reasoning } : {}),
            ...(calls.length
              ? {
                  tool_calls: calls.map((c, i) => ({
                    id: ids[i],
                    type: "function",
                    function: { name: c.name, arguments: argumentText(c) },
                  })),
                }
              : {}),
          },
          finish_reason: answer.stopReason ?? (calls.length ? "tool_calls" : "stop"),
        },
      ],
      usage: openAIUsage(answer),
    };
  },
  partial: (text, model) => [
    openAIWire.first(model),
    ...pieces(text, 3).map((piece) => data(chunk(model, { content: piece }, null))),
  ],
  streamError: (error) => data({ error: { message: error.message, type: error.type } }),
  errorBody: (status, message) => ({ error: { message, type: errorType(status), code: null } }),
};

function chunk(model: string, delta: unknown, finish: string | null) {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

const event = (type: string, value: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

export const anthropicWire: Wire = {
  idPrefix: "toolu",
  first: (model, inputTokens = 0, answer) =>
    event("message_start", {
      message: {
        id: "msg_fake",
        type: "message",
        role: "assistant",
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        usage: anthropicUsage(inputTokens, 1, answer),
      },
    }),
  stream(answer, ids, model) {
    const size = answer.pieceChars ?? 3;
    const calls = answer.toolCalls ?? [];
    const { input, output } = usageOf(answer);
    const events = [anthropicWire.first(model, input, answer), event("ping", {})];
    let index = 0;
    if (answer.thinking) {
      events.push(event("content_block_start", { index, content_block: { type: "thinking", thinking: "" } }));
      for (const piece of pieces(answer.thinking.text, size)) {
        events.push(event("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } }));
      }
      const signature = { type: "signature_delta", signature: answer.thinking.signature };
      events.push(event("content_block_delta", { index, delta: signature }));
      events.push(event("content_block_stop", { index }));
      index++;
    }
    const text = answerText(answer);
    if (text !== "" || calls.length === 0) {
      events.push(event("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const piece of pieces(text, size)) {
        events.push(event("content_block_delta", { index, delta: { type: "text_delta", text: piece } }));
      }
      events.push(event("content_block_stop", { index }));
      index++;
    }
    calls.forEach((call, i) => {
      const block = { type: "tool_use", id: ids[i], name: call.name, input: {} };
      events.push(event("content_block_start", { index, content_block: block }));
      for (const piece of pieces(argumentText(call), size)) {
        events.push(event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } }));
      }
      events.push(event("content_block_stop", { index }));
      index++;
    });
    const stop = answer.stopReason ?? (calls.length ? "tool_use" : "end_turn");
    events.push(
      event("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: output } }),
    );
    events.push(event("message_stop", {}));
    return events;
  },
  json(answer, ids, model) {
    const calls = answer.toolCalls ?? [];
    const { input, output } = usageOf(answer);
    const text = answerText(answer);
    return {
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model,
      content: [
        ...(answer.thinking
          ? [{ type: "thinking", thinking: answer.thinking.text, signature: answer.thinking.signature }]
          : []),
        ...(text !== "" || calls.length === 0 ? [{ type: "text", text }] : []),
        ...calls.map((c, i) => ({ type: "tool_use", id: ids[i], name: c.name, input: JSON.parse(argumentText(c)) })),
      ],
      stop_reason: answer.stopReason ?? (calls.length ? "tool_use" : "end_turn"),
      stop_sequence: null,
      usage: anthropicUsage(input, output, answer),
    };
  },
  partial: (text, model) => [
    anthropicWire.first(model),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...pieces(text, 3).map((piece) =>
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } }),
    ),
  ],
  streamError: (error) => event("error", { error: { type: error.type, message: error.message } }),
  errorBody: (status, message) => ({ type: "error", error: { type: errorType(status), message } }),
};
