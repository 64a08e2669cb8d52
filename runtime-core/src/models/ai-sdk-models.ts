import type { ModelConfig } from "@aexhq/brain-contracts";
import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { createAzure } from "@ai-sdk/azure";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModelV3 } from "@ai-sdk/provider";
import { cappedResponse } from "../egress/capped.js";
import { AiSdkProvider } from "./ai-sdk.js";
import { ModelCallError, type ProviderTransport } from "./types.js";

/** The providers served through the AI SDK's packages. */
export type AiSdkConfig = Extract<
  ModelConfig,
  { provider: "openai-responses" | "google" | "openai-compatible" | "azure" | "bedrock" }
>;

const LABELS: Record<AiSdkConfig["provider"], string> = {
  "openai-responses": "OpenAI",
  google: "Google",
  "openai-compatible": "The OpenAI-compatible server",
  azure: "Azure OpenAI",
  bedrock: "Amazon Bedrock",
};

/**
 * The AI SDK model for a configuration. Every credential and endpoint is passed explicitly: the
 * packages fall back to environment variables (AWS_ACCESS_KEY_ID, GOOGLE_GENERATIVE_AI_API_KEY,
 * …) for what they are not given, and a tenant's session must never use the server's own.
 */
export function aiSdkProvider(config: AiSdkConfig, transport: ProviderTransport): AiSdkProvider {
  const label = LABELS[config.provider];
  const fetch = guardedFetch(label, transport);
  const { name } = config;
  const model = languageModel(config, fetch);
  const secrets = [
    config.apiKey,
    ...(config.provider === "bedrock" ? [config.secretAccessKey, config.sessionToken] : []),
  ];
  return new AiSdkProvider(config.provider, model, {
    label,
    name,
    timeoutMs: config.timeoutMs,
    maxAttempts: config.maxAttempts,
    maxTokens: config.maxTokens,
    secrets: secrets.filter((s): s is string => s !== undefined),
  });
}

function languageModel(config: AiSdkConfig, fetch: typeof globalThis.fetch): LanguageModelV3 {
  const baseURL = config.baseUrl?.replace(/\/+$/, "");
  switch (config.provider) {
    case "openai-responses":
      return createOpenAI({ apiKey: config.apiKey, baseURL, fetch }).responses(config.name);
    case "google":
      return createGoogleGenerativeAI({ apiKey: config.apiKey, baseURL, fetch })(config.name);
    case "openai-compatible":
      return createOpenAICompatible({
        name: "compatible",
        apiKey: config.apiKey,
        baseURL: baseURL!,
        fetch,
        includeUsage: true,
      }).chatModel(config.name);
    case "azure":
      return createAzure({
        apiKey: config.apiKey,
        ...(baseURL ? { baseURL } : { resourceName: config.resourceName }),
        ...(config.apiVersion ? { apiVersion: config.apiVersion } : {}),
        fetch,
      }).responses(config.name);
    case "bedrock":
      return createAmazonBedrock({
        region: config.region,
        ...(config.apiKey
          ? { apiKey: config.apiKey }
          : {
              accessKeyId: config.accessKeyId,
              secretAccessKey: config.secretAccessKey,
              ...(config.sessionToken ? { sessionToken: config.sessionToken } : {}),
            }),
        ...(baseURL ? { baseURL } : {}),
        fetch,
      })(config.name);
  }
}

/**
 * The egress guard's fetch with the answer capped, redirects answered as errors (a redirect would
 * carry the key elsewhere), as the hand-written clients send their requests.
 */
function guardedFetch(label: string, transport: ProviderTransport): typeof globalThis.fetch {
  return async (input, init) => {
    const answered = await transport.fetch(input, { ...init, redirect: "manual" });
    return cappedResponse(answered, transport.maxAnswerBytes, () => {
      return new ModelCallError(
        "answer_too_large",
        `${label} answered more than ${transport.maxAnswerBytes} bytes; the rest was not read`,
      );
    });
  };
}
