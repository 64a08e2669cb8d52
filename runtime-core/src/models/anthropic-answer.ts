import type { ModelToolCall, ModelUsage, ThinkingBlock } from "@aexhq/brain-contracts";
import { isJsonResponse, jsonBody, streamedError } from "./provider-http.js";
import { eventJson, sseEvents } from "./sse.js";
import { ModelCallError, type ProviderResponse, type StopReason } from "./types.js";
import { count, type Json, object, string, toolArguments } from "./wire.js";

const PROVIDER = "Anthropic";

interface Block {
  type: string;
  text: string;
  /** A thinking block's signature (signature_delta), or a redacted one's data. */
  signature?: string;
  data?: string;
  id?: string;
  name?: string;
  /** input_json_delta pieces of a tool_use block. */
  json: string;
  /** A tool_use block's input as content_block_start gave it. */
  input?: unknown;
}

/**
 * Reads a Messages answer: normally an event stream (message_start, content blocks, message_delta,
 * message_stop, with pings and possibly an `error` event anywhere), or a JSON message from servers
 * that do not stream.
 */
export async function readAnthropicAnswer(
  response: Response,
  configModel: string,
  onText?: (delta: string) => void,
): Promise<ProviderResponse> {
  if (isJsonResponse(response)) return message(await jsonBody(PROVIDER, response), configModel);
  if (!response.body) throw new ModelCallError("model_error", `${PROVIDER} answered without a body`);

  const blocks = new Map<number, Block>();
  let usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  let model: string | undefined;
  let stop: string | undefined;
  let done = false;
  for await (const event of sseEvents(response.body)) {
    const data = eventJson(event, PROVIDER);
    const index = typeof data.index === "number" ? data.index : -1;
    switch (string(data.type) ?? event.event) {
      case "message_start": {
        const start = object(data.message);
        model = string(start?.model) || model;
        const u = object(start?.usage);
        if (u) usage = usageOf(u);
        break;
      }
      case "content_block_start":
        blocks.set(index, startedBlock(object(data.content_block), onText));
        break;
      case "content_block_delta": {
        const block = blocks.get(index);
        if (!block)
          throw new ModelCallError("model_error", `${PROVIDER} streamed a delta for a block it never started`);
        addDelta(block, object(data.delta), onText);
        break;
      }
      case "message_delta": {
        stop = string(object(data.delta)?.stop_reason) || stop;
        // Counts here are cumulative: they replace message_start's.
        const u = object(data.usage);
        if (u?.output_tokens !== undefined) usage.outputTokens = count(u.output_tokens);
        if (u?.input_tokens !== undefined) usage = { ...usageOf(u), outputTokens: usage.outputTokens };
        break;
      }
      case "message_stop":
        done = true;
        break;
      case "error":
        throw streamedError(PROVIDER, data);
      // ping, content_block_stop and event types added later carry nothing needed here.
    }
    if (done) break;
  }
  if (!done) throw new ModelCallError("model_error", `${PROVIDER}'s stream ended before the answer was complete`);

  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  const toolCalls = ordered
    .filter((b) => b.type === "tool_use")
    .map((b, i) => {
      const input = b.json.trim() === "" && object(b.input) ? b.input : toolArguments(PROVIDER, b.name ?? "", b.json);
      return toolCall(b.id, b.name, input, i);
    });
  const text = ordered
    .filter((b) => b.type === "text")
    .map((b) => b.text)
    .join("");
  const answer = { text, toolCalls, usage, stopReason: stopReason(stop), model: model ?? configModel };
  return withThinking(answer, ordered);
}

/** A content block as content_block_start opens it; a text block's opening text is live text too. */
function startedBlock(block: Json | undefined, onText?: (delta: string) => void): Block {
  const type = string(block?.type) ?? "other";
  const opening = type === "text" ? (string(block?.text) ?? "") : "";
  if (opening !== "") onText?.(opening);
  return {
    type,
    text: string(block?.text) ?? "",
    json: "",
    ...(type === "tool_use" ? { id: string(block?.id), name: string(block?.name), input: block?.input } : {}),
    ...(type === "thinking" ? { text: string(block?.thinking) ?? "", signature: string(block?.signature) ?? "" } : {}),
    ...(type === "redacted_thinking" ? { data: string(block?.data) ?? "" } : {}),
  };
}

/** One content_block_delta: text (live), tool arguments, thinking, or a thinking block's signature. */
function addDelta(block: Block, delta: Json | undefined, onText?: (delta: string) => void): void {
  switch (delta?.type) {
    case "text_delta": {
      const piece = string(delta.text) ?? "";
      block.text += piece;
      if (block.type === "text" && piece !== "") onText?.(piece);
      break;
    }
    case "input_json_delta":
      block.json += string(delta.partial_json) ?? "";
      break;
    case "thinking_delta":
      block.text += string(delta.thinking) ?? "";
      break;
    case "signature_delta":
      block.signature = (block.signature ?? "") + (string(delta.signature) ?? "");
      break;
  }
}

/** The answer with its thinking blocks (signed, for sending back) and their text as `reasoning`. */
function withThinking(answer: ProviderResponse, blocks: Pick<Block, "type" | "text" | "signature" | "data">[]) {
  const thinking: ThinkingBlock[] = [];
  for (const b of blocks) {
    if (b.type === "thinking") thinking.push({ type: "thinking", thinking: b.text, signature: b.signature ?? "" });
    if (b.type === "redacted_thinking") thinking.push({ type: "redacted_thinking", data: b.data ?? "" });
  }
  if (thinking.length === 0) return answer;
  const reasoning = thinking.map((t) => (t.type === "thinking" ? t.thinking : "")).join("");
  return { ...answer, thinking, ...(reasoning ? { reasoning } : {}) };
}

/** The non-streaming message shape. */
function message(body: unknown, configModel: string): ProviderResponse {
  const json = object(body);
  if (json?.type === "error" || json?.error !== undefined) throw streamedError(PROVIDER, json);
  if (!json || !Array.isArray(json.content)) {
    throw new ModelCallError("model_error", `${PROVIDER} answered without message content`);
  }
  const content = json.content.map(object).filter((b): b is Json => b !== undefined);
  const u = object(json.usage);
  const blocks = content.map((b) => ({
    type: string(b.type) ?? "other",
    text: string(b.thinking) ?? "",
    signature: string(b.signature) ?? "",
    data: string(b.data) ?? "",
  }));
  return withThinking(answerOf(json, content, u, configModel), blocks);
}

function answerOf(json: Json, content: Json[], u: Json | undefined, configModel: string): ProviderResponse {
  return {
    text: content
      .filter((b) => b.type === "text")
      .map((b) => string(b.text) ?? "")
      .join(""),
    toolCalls: content
      .filter((b) => b.type === "tool_use")
      .map((b, i) => toolCall(string(b.id), string(b.name), b.input ?? {}, i)),
    usage: u ? usageOf(u) : { inputTokens: 0, outputTokens: 0 },
    stopReason: stopReason(string(json.stop_reason)),
    model: string(json.model) || configModel,
  };
}

/**
 * Cached prompt tokens are reported apart from `input_tokens`; they are input all the same, and
 * are kept apart too (read from the cache, written to it) so that what caching saved shows.
 */
function usageOf(usage: Json): ModelUsage {
  const read = count(usage.cache_read_input_tokens);
  const written = count(usage.cache_creation_input_tokens);
  return {
    inputTokens: count(usage.input_tokens) + read + written,
    outputTokens: count(usage.output_tokens),
    ...(read > 0 ? { cachedInputTokens: read } : {}),
    ...(written > 0 ? { cacheWriteInputTokens: written } : {}),
  };
}

function toolCall(id: string | undefined, name: string | undefined, input: unknown, position: number): ModelToolCall {
  if (!name) throw new ModelCallError("model_error", `${PROVIDER} answered a tool call without a name`);
  return { id: id || `toolu_${position}`, name, input: input as ModelToolCall["input"] };
}

function stopReason(reason: string | undefined): StopReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "end";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "max_tokens";
    default:
      return "other";
  }
}
