import { MODEL_SECRET_FIELDS, type ModelConfig, storableText, toStorable } from "@aexhq/brain-contracts";
import { aiSdkProvider } from "./ai-sdk-models.js";
import { AnthropicProvider } from "./anthropic.js";
import { OpenAIProvider } from "./openai.js";
import { ScriptedProvider } from "./scripted.js";
import { ModelCallError, type ModelProvider, type ProviderTransport } from "./types.js";

// The factory lives apart from the provider seam (types.ts), which every provider imports: this
// module imports every provider, so keeping the two together made one import circle of them all.

export function createProvider(config: ModelConfig, transport: ProviderTransport): ModelProvider {
  switch (config.provider) {
    case "scripted":
      return storableAnswers(new ScriptedProvider(config.script, config.toolScript ?? []));
    case "openai":
      return storableAnswers(new OpenAIProvider(config, transport));
    case "anthropic":
      return storableAnswers(new AnthropicProvider(config, transport));
    default:
      return storableAnswers(aiSdkProvider(config, transport));
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
        throw new ModelCallError(error.code, storableText(error.message), error.status, {
          retryAfterMs: error.retryAfterMs,
          refused: error.refused,
          context: error.context,
        });
      }
    },
  };
}

/** What the journal and the sessions table keep of a provider configuration: never credentials. */
export function publicModelConfig(config: ModelConfig): { provider: string } & Record<string, unknown> {
  if (config.provider === "scripted") return { provider: "scripted" };
  const shown: { provider: string } & Record<string, unknown> = { ...config };
  for (const field of MODEL_SECRET_FIELDS) delete shown[field];
  return shown;
}
