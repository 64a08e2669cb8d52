import type { ModelToolCall, ModelUsage } from "@aexhq/brain-contracts";
import { isJsonResponse, jsonBody, streamedError } from "./provider-http.js";
import { eventJson, sseEvents } from "./sse.js";
import { ModelCallError, type ProviderResponse, type StopReason } from "./types.js";
import { array, count, type Json, object, string, toolArguments } from "./wire.js";

const PROVIDER = "OpenAI";

/**
 * Reads a Chat Completions answer: normally an event stream of `chat.completion.chunk`s ending in
 * `data: [DONE]`, but a JSON `chat.completion` from servers that ignore `stream`.
 */
export async function readOpenAIAnswer(
  response: Response,
  configModel: string,
  onText?: (delta: string) => void,
): Promise<ProviderResponse> {
  if (isJsonResponse(response)) return completion(await jsonBody(PROVIDER, response), configModel);
  if (!response.body) throw new ModelCallError("model_error", `${PROVIDER} answered without a body`);

  let text = "";
  let reasoning = "";
  const calls = new Map<number, { id?: string; name?: string; args: string }>();
  let finish: string | undefined;
  let usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  let model: string | undefined;
  let done = false;
  for await (const event of sseEvents(response.body)) {
    if (event.data.trim() === "[DONE]") {
      done = true;
      break;
    }
    const chunk = eventJson(event, PROVIDER);
    if (chunk.error !== undefined) throw streamedError(PROVIDER, chunk);
    model = string(chunk.model) || model;
    const u = object(chunk.usage);
    if (u) usage = openAIUsage(u);
    const choice = object(array(chunk.choices)[0]);
    if (!choice) continue;
    const delta = object(choice.delta);
    const piece = string(delta?.content) ?? "";
    if (piece !== "") {
      text += piece;
      onText?.(piece);
    }
    reasoning += string(delta?.reasoning_content) ?? string(delta?.reasoning) ?? "";
    for (const item of array(delta?.tool_calls)) {
      const piece = object(item);
      if (!piece) continue;
      const fn = object(piece.function);
      const id = string(piece.id) || undefined;
      // Calls are keyed by `index`; a server that omits it starts a call with each new id.
      const last = Math.max(-1, ...calls.keys());
      const index = typeof piece.index === "number" ? piece.index : id !== undefined || last < 0 ? last + 1 : last;
      const call = calls.get(index) ?? { args: "" };
      calls.set(index, call);
      call.id ??= id;
      call.name ??= string(fn?.name) || undefined;
      call.args += string(fn?.arguments) ?? "";
    }
    finish = string(choice.finish_reason) || finish;
  }
  // A server that stops after the finish reason (and usage) without `[DONE]` still answered fully.
  if (!done && finish === undefined) {
    throw new ModelCallError("model_error", `${PROVIDER}'s stream ended before the answer was complete`);
  }
  const toolCalls = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => toolCall(c.id ?? `call_${index}`, c.name, c.args));
  const answer = { text, toolCalls, usage, stopReason: stopReason(finish), model: model ?? configModel };
  return reasoning ? { ...answer, reasoning } : answer;
}

/** The non-streaming `chat.completion` shape. */
function completion(body: unknown, configModel: string): ProviderResponse {
  const json = object(body);
  if (json?.error !== undefined) throw streamedError(PROVIDER, json);
  const choice = object(array(json?.choices)[0]);
  const message = object(choice?.message);
  if (!json || !choice || !message) throw new ModelCallError("model_error", `${PROVIDER} answered without a choice`);
  const toolCalls = array(message.tool_calls).map((item, index) => {
    const call = object(item);
    const fn = object(call?.function);
    const args = fn?.arguments;
    // Some servers send the arguments as an object rather than JSON text.
    const text = typeof args === "string" ? args : args === undefined ? "" : JSON.stringify(args);
    return toolCall(string(call?.id) || `call_${index}`, string(fn?.name), text);
  });
  const u = object(json.usage);
  const reasoning = string(message.reasoning_content) ?? string(message.reasoning);
  return {
    text: string(message.content) ?? "",
    toolCalls,
    usage: u ? openAIUsage(u) : { inputTokens: 0, outputTokens: 0 },
    stopReason: stopReason(string(choice.finish_reason)),
    model: string(json.model) || configModel,
    ...(reasoning ? { reasoning } : {}),
  };
}

function toolCall(id: string, name: string | undefined, args: string): ModelToolCall {
  if (!name) throw new ModelCallError("model_error", `${PROVIDER} answered a tool call without a name`);
  return { id, name, input: toolArguments(PROVIDER, name, args) as ModelToolCall["input"] };
}

function stopReason(finish: string | undefined): StopReason {
  switch (finish) {
    case "stop":
      return "end";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "length":
      return "max_tokens";
    default:
      return "other";
  }
}

/** OpenAI caches long prompts by itself: `prompt_tokens_details.cached_tokens` of `prompt_tokens`. */
function openAIUsage(usage: Json): ModelUsage {
  const cached = count(object(usage.prompt_tokens_details)?.cached_tokens);
  return {
    inputTokens: count(usage.prompt_tokens),
    outputTokens: count(usage.completion_tokens),
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
