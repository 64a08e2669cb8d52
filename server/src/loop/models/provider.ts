import type { ModelConfig } from "@aexhq/brain-contracts";
import { ScriptedProvider } from "./scripted.js";

/** The provider seam. Real providers (OpenAI-compatible, Anthropic) plug in behind this interface. */
export type ModelMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ModelToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

export interface ModelToolCall {
  id: string;
  name: string;
  input: unknown;
}

export interface ModelTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  system?: string;
  messages: ModelMessage[];
  tools: ModelTool[];
}

export interface ModelResponse {
  text: string;
  toolCalls: ModelToolCall[];
  usage: { inputTokens: number; outputTokens: number };
}

export interface ModelCallContext {
  signal: AbortSignal;
  /** 0-based count of model calls this session made before this one (from the journal). */
  index: number;
}

export interface ModelProvider {
  readonly name: string;
  complete(request: ModelRequest, context: ModelCallContext): Promise<ModelResponse>;
}

export function createProvider(config: ModelConfig): ModelProvider {
  switch (config.provider) {
    case "scripted":
      return new ScriptedProvider(config.script);
  }
}

/** What the journal keeps of a provider configuration: never credentials. */
export function publicModelConfig(config: ModelConfig): Record<string, unknown> {
  return { provider: config.provider };
}
