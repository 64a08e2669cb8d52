import {
  type ErrorCode,
  type ModelConfig,
  type ModelMessage,
  type ModelTool,
  type ModelToolCall,
  type ModelUsage,
  type ResponseFormat,
  storableText,
  toStorable,
} from "@aexhq/brain-contracts";
import { AnthropicProvider } from "./anthropic.js";
import { OpenAIProvider } from "./openai.js";
import { ScriptedProvider } from "./scripted.js";

/**
 * The provider seam: the Agentloop and tools' model calls both go through `complete`. A provider
 * is stateless between calls; the session's configuration (with its decrypted key) builds it.
 */
export type { ModelMessage, ModelTool, ModelToolCall };

export interface ProviderRequest {
  /** Empty or absent: no system prompt. */
  system?: string;
  messages: ModelMessage[];
  /** Empty: the model is offered no tools. */
  tools: ModelTool[];
  /** Absent: the provider's default (free text); no conversation default is applied. */
  responseFormat?: ResponseFormat;
  maxTokens?: number;
}

export type StopReason = "end" | "tool_calls" | "max_tokens" | "other";

export interface ProviderResponse {
  text: string;
  toolCalls: ModelToolCall[];
  usage: ModelUsage;
  stopReason: StopReason;
  /** The model that answered, as the provider named it. */
  model: string;
}

export interface ModelCallContext {
  /** Aborts the provider request (tool finished, deadline, shutdown). */
  signal: AbortSignal;
  /** 0-based count of the session's earlier model calls of the same origin (the scripted provider's position). */
  index: number;
  /** "agentloop" or "tool": the scripted provider answers tool requests from its toolScript. */
  origin: "agentloop" | "tool";
}

export interface ModelProvider {
  readonly name: string;
  complete(request: ProviderRequest, context: ModelCallContext): Promise<ProviderResponse>;
}

/** A provider failure with one of the documented model_* codes. */
export class ModelCallError extends Error {
  constructor(
    readonly code: Extract<
      ErrorCode,
      | "model_error"
      | "model_auth_failed"
      | "model_rate_limited"
      | "model_bad_request"
      | "model_unavailable"
      | "model_timeout"
    >,
    message: string,
    /** The provider's HTTP status, when it answered one. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "ModelCallError";
  }
}

export function createProvider(config: ModelConfig): ModelProvider {
  switch (config.provider) {
    case "scripted":
      return storableAnswers(new ScriptedProvider(config.script, config.toolScript ?? []));
    case "openai":
      return storableAnswers(new OpenAIProvider(config));
    case "anthropic":
      return storableAnswers(new AnthropicProvider(config));
  }
}

/**
 * A provider's answers and error messages are text from outside, journaled as they are: a NUL
 * character or an unpaired surrogate in them would make every write of the answer fail, and the
 * model call and its turn would never end. Such characters become U+FFFD instead.
 */
function storableAnswers(provider: ModelProvider): ModelProvider {
  return {
    name: provider.name,
    async complete(request, context) {
      try {
        return toStorable(await provider.complete(request, context));
      } catch (error) {
        if (!(error instanceof ModelCallError)) throw error;
        throw new ModelCallError(error.code, storableText(error.message), error.status);
      }
    },
  };
}

/** What the journal and the sessions table keep of a provider configuration: never credentials. */
export function publicModelConfig(config: ModelConfig): Record<string, unknown> {
  if (config.provider === "scripted") return { provider: "scripted" };
  const { apiKey: _secret, ...rest } = config;
  return rest;
}
