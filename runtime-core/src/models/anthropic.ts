import type { ModelConfig } from "@aexhq/brain-contracts";
import { readAnthropicAnswer } from "./anthropic-answer.js";
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

type Config = Extract<ModelConfig, { provider: "anthropic" }>;

const DEFAULT_BASE_URL = "https://api.anthropic.com";
const API_VERSION = "2023-06-01";
/** The Messages API requires a generation limit; this one applies when neither request nor config sets one. */
const DEFAULT_MAX_TOKENS = 4096;

/**
 * Anthropic's Messages API, and servers speaking it. The base URL may be given with or without its
 * `/v1` segment.
 */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";
  constructor(
    readonly config: Config,
    private readonly transport: ProviderTransport,
  ) {}

  complete(request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse> {
    const base = (this.config.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
    const url = base.endsWith("/v1") ? `${base}/messages` : `${base}/v1/messages`;
    return providerCall(
      {
        provider: "Anthropic",
        url,
        headers: {
          "x-api-key": this.config.apiKey,
          "anthropic-version": API_VERSION,
          "content-type": "application/json",
          accept: "text/event-stream, application/json",
        },
        body: anthropicBody(this.config, request),
        apiKey: this.config.apiKey,
        timeoutMs: this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        maxAttempts: this.config.maxAttempts,
      },
      context,
      this.transport,
      (response) => readAnthropicAnswer(response, this.config.name, context.onText),
    );
  }
}

/**
 * Prompt caching: a breakpoint on the system prompt, on the last tool and on the conversation's
 * last block, so the next call of an agent loop (the same prefix, a turn longer) reads all of it
 * from Anthropic's cache. A prefix shorter than the model's minimum is simply not cached.
 */
const CACHED = { type: "ephemeral" } as const;

export function anthropicBody(config: Config, request: ProviderRequest): Json {
  const budget = config.thinking?.budgetTokens;
  const body: Json = {
    model: config.name,
    max_tokens: request.maxTokens ?? config.maxTokens ?? (budget ? budget + DEFAULT_MAX_TOKENS : DEFAULT_MAX_TOKENS),
  };
  if (budget) body.thinking = { type: "enabled", budget_tokens: budget };
  const system = systemPrompt(request);
  if (system) body.system = [{ type: "text", text: system, cache_control: CACHED }];
  const messages = anthropicMessages(request.messages);
  const lastBlock = (messages.at(-1)?.content as Json[] | undefined)?.at(-1);
  if (lastBlock) lastBlock.cache_control = CACHED;
  body.messages = messages;
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
      ...(i === tools.length - 1 ? { cache_control: CACHED } : {}),
    }));
  }
  body.stream = true;
  return body;
}

/**
 * The Messages API has no response format. A JSON answer is asked for in the system prompt
 * instead: the model follows it, but nothing enforces it, so the answer is returned as the model
 * wrote it and whoever asked for JSON still validates it.
 */
function systemPrompt(request: ProviderRequest): string {
  const system = request.system ?? "";
  const format = request.responseFormat;
  if (format?.type !== "json") return system;
  let instruction = "Answer with exactly one JSON value and nothing else: no prose, no code fences.";
  if (format.schema) instruction += ` The value must conform to this JSON Schema:\n${JSON.stringify(format.schema)}`;
  return system ? `${system}\n\n${instruction}` : instruction;
}

/**
 * The conversation in the API's shape: roles alternate, so tool results (user content blocks) and
 * consecutive messages of one role merge into one message; empty text blocks are rejected by the
 * API and left out.
 */
export function anthropicMessages(messages: ModelMessage[]): Json[] {
  const out: { role: "user" | "assistant"; content: Json[] }[] = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const blocks: Json[] = [];
    if (message.role === "tool") {
      blocks.push({ type: "tool_result", tool_use_id: message.toolCallId, content: message.content });
    } else {
      // Thinking goes back first and unchanged: the API checks its signature.
      if (message.role === "assistant") blocks.push(...(message.thinking ?? []));
      if (message.content !== "") blocks.push({ type: "text", text: message.content });
      if (message.role === "assistant") {
        for (const c of message.toolCalls ?? [])
          blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.input });
      }
    }
    const last = out.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}
