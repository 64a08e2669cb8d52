import type { ModelConfig } from "@aexhq/brain-contracts";
import {
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderResponse,
} from "./provider.js";

type Config = Extract<ModelConfig, { provider: "anthropic" }>;

/** Placeholder: replaced by the real Anthropic provider. */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";
  constructor(readonly config: Config) {}
  async complete(_request: ProviderRequest, _context: ModelCallContext): Promise<ProviderResponse> {
    throw new ModelCallError("model_error", "not implemented");
  }
}
