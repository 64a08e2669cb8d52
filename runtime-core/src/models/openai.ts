import type { ModelConfig } from "@aexhq/brain-contracts";
import { readOpenAIAnswer } from "./openai-answer.js";
import { DEFAULT_TIMEOUT_MS, providerCall } from "./provider-http.js";
import type {
  ModelCallContext,
  ModelMessage,
  ModelProvider,
  ProviderRequest,
  ProviderResponse,
  ProviderTransport,
} from "./types.js";
import type { Json } from "./wire.js";

type Config = Extract<ModelConfig, { provider: "openai" }>;

const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/**
 * OpenAI's Chat Completions API, and any server speaking it (a local model server, a proxy): give
 * its base URL including the version segment, e.g. `http://127.0.0.1:8080/v1`.
 */
export class OpenAIProvider implements ModelProvider {
  readonly name = "openai";
  constructor(
    readonly config: Config,
    private readonly transport: ProviderTransport,
  ) {}

  complete(request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse> {
    const base = (this.config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    return providerCall(
      {
        provider: "OpenAI",
        url: `${base}/chat/completions`,
        headers: {
          authorization: `Bearer ${this.config.apiKey}`,
          "content-type": "application/json",
          accept: "text/event-stream, application/json",
        },
        body: openAIBody(this.config, request),
        apiKey: this.config.apiKey,
        timeoutMs: this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxAttempts: this.config.maxAttempts,
      },
      context,
      this.transport,
      (response) => readOpenAIAnswer(response, this.config.name, context.onText),
    );
  }
}

/**
 * The request body. Optional parts are sent only when asked for, so servers that implement a
 * subset of the API accept plain requests. A `text` response format is the default and is omitted.
 */
export function openAIBody(config: Config, request: ProviderRequest): Json {
  const messages: Json[] = [];
  if (request.system) messages.push({ role: "system", content: request.system });
  for (const message of request.messages) messages.push(openAIMessage(message));
  const body: Json = { model: config.name, messages };
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.inputSchema },
    }));
  }
  const maxTokens = request.maxTokens ?? config.maxTokens;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  const format = request.responseFormat;
  if (format?.type === "json") {
    body.response_format = format.schema
      ? { type: "json_schema", json_schema: { name: "response", schema: format.schema } }
      : { type: "json_object" };
  }
  body.stream = true;
  body.stream_options = { include_usage: true };
  return body;
}

function openAIMessage(message: ModelMessage): Json {
  switch (message.role) {
    case "user":
      return { role: "user", content: message.content };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: "assistant", content: message.content };
      return {
        role: "assistant",
        // The API's shape for "only tool calls": no content rather than an empty one.
        content: message.content === "" ? null : message.content,
        tool_calls: calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: JSON.stringify(c.input) },
        })),
      };
    }
  }
}
