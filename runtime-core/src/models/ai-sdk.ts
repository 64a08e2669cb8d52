import type { ModelToolCall, ModelUsage } from "@aexhq/brain-contracts";
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3StreamPart,
  type LanguageModelV3Usage,
} from "@ai-sdk/provider";
import { egressDeniedIn } from "../egress/denied.js";
import { callOptions } from "./ai-sdk-prompt.js";
import { contextExceeded } from "./context-window.js";
import { attemptWithin, classify, DEFAULT_TIMEOUT_MS, describe, providerMessage, statusCode } from "./provider-http.js";
import { DEFAULT_MAX_ATTEMPTS, retryAfterOf, withRetries } from "./retry.js";
import {
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderResponse,
  type StopReason,
} from "./types.js";
import { object, string, toolArguments } from "./wire.js";

export interface AiSdkSettings {
  /** Names the provider in messages ("Google", "Amazon Bedrock"). */
  label: string;
  /** The configured model name: the answer's when the provider names none. */
  name: string;
  timeoutMs?: number | undefined;
  maxAttempts?: number | undefined;
  maxTokens?: number | undefined;
  /** Redacted from every error message (API keys, a secret access key). */
  secrets: string[];
}

/**
 * A provider through the AI SDK's provider interface (a LanguageModelV3 of a maintained package:
 * @ai-sdk/google, /amazon-bedrock, /azure, /openai, /openai-compatible), with Brain's rules
 * around it, as the hand-written clients have them: one deadline per attempt, caller aborts, the
 * documented model_* codes, retries of what the provider certainly did not process (retry.ts),
 * live text, and no secret in any message. The model's fetch is the egress guard's, capped
 * (ai-sdk-models.ts); the SDK's own retries are not used (doStream has none).
 */
export class AiSdkProvider implements ModelProvider {
  constructor(
    readonly name: string,
    private readonly model: LanguageModelV3,
    private readonly settings: AiSdkSettings,
  ) {}

  complete(request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse> {
    const attempts = this.settings.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    return withRetries(context, attempts, () => this.attempt(request, context));
  }

  private attempt(request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse> {
    const { label, secrets, name, maxTokens } = this.settings;
    const timeoutMs = this.settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const work = async (abortSignal: AbortSignal) => {
      const { stream } = await this.model.doStream({ ...callOptions(request, maxTokens), abortSignal });
      return readStream(stream, name, context.onText);
    };
    return attemptWithin(context.signal, { label, timeoutMs, secrets }, work, (error) => aiSdkError(label, error));
  }
}

/** The answer from the model's stream parts: text (each piece to `onText`), reasoning, tool calls, usage. */
async function readStream(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  configModel: string,
  onText?: (delta: string) => void,
): Promise<ProviderResponse> {
  let text = "";
  let reasoning = "";
  const toolCalls: ModelToolCall[] = [];
  let usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  let stopReason: StopReason | undefined;
  let model: string | undefined;
  for await (const part of stream) {
    switch (part.type) {
      case "text-delta":
        text += part.delta;
        if (part.delta !== "") onText?.(part.delta);
        break;
      case "reasoning-delta":
        reasoning += part.delta;
        break;
      case "tool-call":
        toolCalls.push({ id: part.toolCallId, name: part.toolName, input: toolInput(part.toolName, part.input) });
        break;
      case "response-metadata":
        model = part.modelId ?? model;
        break;
      case "finish":
        usage = usageOf(part.usage);
        // The packages say "finish" even when the stream just stopped: no reason at all is that.
        if (part.finishReason.unified !== "other" || part.finishReason.raw !== undefined) {
          stopReason = stopOf(part.finishReason.unified);
        }
        break;
      case "error":
        throw part.error;
    }
  }
  if (stopReason === undefined)
    throw new ModelCallError("model_error", "the stream ended before the answer was complete");
  const answer = { text, toolCalls, usage, stopReason, model: model ?? configModel };
  return reasoning ? { ...answer, reasoning } : answer;
}

function toolInput(name: string, input: string): ModelToolCall["input"] {
  return toolArguments("the provider", name, input) as ModelToolCall["input"];
}

function usageOf(usage: LanguageModelV3Usage): ModelUsage {
  const read = usage.inputTokens.cacheRead ?? 0;
  const written = usage.inputTokens.cacheWrite ?? 0;
  return {
    inputTokens: usage.inputTokens.total ?? 0,
    outputTokens: usage.outputTokens.total ?? 0,
    ...(read > 0 ? { cachedInputTokens: read } : {}),
    ...(written > 0 ? { cacheWriteInputTokens: written } : {}),
  };
}

function stopOf(reason: string): StopReason {
  if (reason === "stop") return "end";
  if (reason === "tool-calls") return "tool_calls";
  if (reason === "length") return "max_tokens";
  return "other";
}

/**
 * The documented code for what the AI SDK threw: an APICallError carries the HTTP status, headers
 * and body (rate limits, auth, context windows, 5xx); a network failure, the guard's refusal and
 * the byte cap are found in its causes.
 */
export function aiSdkError(label: string, error: unknown): ModelCallError {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ModelCallError) return e;
  }
  const denied = egressDeniedIn(error);
  if (denied) return new ModelCallError("egress_denied", `${label} was not called: ${denied.message}`);
  // isInstance, not instanceof: each provider package may carry its own copy of the class.
  const api = APICallError.isInstance(error) ? error : null;
  if (api?.statusCode !== undefined) return httpFailure(label, api.statusCode, api.responseBody, api.responseHeaders);
  const cause = api ? api.cause : error;
  if (cause instanceof TypeError || (cause instanceof Error && cause.cause !== undefined))
    return classify(label, cause);
  if (error !== null && typeof error === "object" && !(error instanceof Error)) {
    const { message, type } = providerMessage(error);
    return new ModelCallError("model_error", describe(`${label} reported an error`, message, type));
  }
  return classify(label, error);
}

function httpFailure(
  label: string,
  status: number,
  body: string | undefined,
  headers: Record<string, string> | undefined,
): ModelCallError {
  let parsed: unknown = body ?? "";
  try {
    parsed = JSON.parse(body ?? "");
  } catch {}
  const { message, type } = typeof parsed === "string" ? { message: parsed.trim() } : providerMessage(parsed);
  const head = `${label} answered HTTP ${status}`;
  const context = status < 500 ? contextExceeded(message, string(object(object(parsed)?.error)?.code)) : null;
  if (context) return new ModelCallError("model_context_exceeded", describe(head, message, type), status, { context });
  const retryAfterMs = retryAfterOf(new Headers(headers ?? {}));
  return new ModelCallError(statusCode(status), describe(head, message, type), status, { retryAfterMs });
}
