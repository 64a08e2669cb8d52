import type {
  ErrorCode,
  ModelMessage,
  ModelTool,
  ModelToolCall,
  ModelUsage,
  RecordPayload,
  ResponseFormat,
  ThinkingBlock,
} from "@aexhq/brain-contracts";
import type { Upstream } from "../egress/capped.js";

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
  /**
   * The reasoning the model showed before its answer, when the provider sends it apart
   * (`reasoning_content` of DeepSeek, vLLM and other compatible servers). Journaled, never sent back.
   */
  reasoning?: string;
  /** Extended thinking blocks (Anthropic's), signed: journaled, and sent back with the conversation. */
  thinking?: ThinkingBlock[];
}

export interface ModelCallContext {
  /** Aborts the provider request (tool finished, deadline, shutdown). */
  signal: AbortSignal;
  /**
   * Receives every attempt of the call when the provider's request was retried (retry.ts), for
   * the model_call_ended record; a call answered at the first attempt adds nothing.
   */
  attempts?: ModelAttempt[];
  /** Epoch ms past which no retry is waited for (the turn's caller deadline); none: no bound. */
  deadline?: number | null;
  /** 0-based count of the session's earlier model calls of the same origin (the scripted provider's position). */
  index: number;
  /** "agentloop" or "tool": the scripted provider answers tool requests from its toolScript. */
  origin: "agentloop" | "tool";
  /**
   * Receives the answer's text as the provider streams it, piece by piece in order (live text,
   * not journaled); the response's `text` is still the whole of it. A provider that does not
   * stream never calls it.
   */
  onText?: ((delta: string) => void) | undefined;
}

/** How providers reach the network: the egress guard's fetch, and the cap on an answer's bytes. */
export type ProviderTransport = Upstream;

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
      | "model_context_exceeded"
      | "model_unavailable"
      | "model_timeout"
      | "egress_denied"
      | "answer_too_large"
    >,
    message: string,
    /** The provider's HTTP status, when it answered one. */
    readonly status?: number,
    details: { retryAfterMs?: number | undefined; refused?: boolean; context?: ContextNumbers | undefined } = {},
  ) {
    super(message);
    this.name = "ModelCallError";
    this.retryAfterMs = details.retryAfterMs;
    this.refused = details.refused ?? false;
    this.context = details.context;
  }
  /** model_context_exceeded: the tokens asked and the window, as far as the provider said. */
  readonly context: ContextNumbers | undefined;
  /** The provider's `retry-after`, in ms, when it sent one. */
  readonly retryAfterMs: number | undefined;
  /** The connection was refused: the request never reached the provider. */
  readonly refused: boolean;
}

export type ContextNumbers = { tokens?: number; window?: number };

/** One attempt of a retried model call, as journaled in its model_call_ended record. */
export type ModelAttempt = NonNullable<RecordPayload<"model_call_ended">["attempts"]>[number];

/** An answer as its model_call_ended record keeps it: the reasoning too, when there is some. */
export function recordedResponse(response: ProviderResponse) {
  const { text, toolCalls, stopReason, reasoning, thinking } = response;
  return {
    text,
    toolCalls,
    stopReason,
    ...(reasoning ? { reasoning } : {}),
    ...(thinking && thinking.length > 0 ? { thinking } : {}),
  };
}
