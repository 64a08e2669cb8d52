import type { ModelConfig } from "@aexhq/brain-contracts";
import {
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderResponse,
} from "./provider.js";

type Config = Extract<ModelConfig, { provider: "openai" }>;

/** Placeholder: replaced by the real OpenAI provider. */
export class OpenAIProvider implements ModelProvider {
  readonly name = "openai";
  constructor(readonly config: Config) {}
  async complete(_request: ProviderRequest, _context: ModelCallContext): Promise<ProviderResponse> {
    throw new ModelCallError("model_error", "not implemented");
  }
}
