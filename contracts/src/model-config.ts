import { z } from "zod";
import { MAX_MESSAGE_CHARS, MAX_SCRIPT_STEPS } from "./limits.js";
import { HttpUrlSchema } from "./urls.js";

export const ScriptedToolCallSchema = z.strictObject({
  name: z.string().min(1).max(128),
  input: z.json(),
});
export const ScriptStepSchema = z.union([
  z.strictObject({ text: z.string().max(MAX_MESSAGE_CHARS) }),
  z.strictObject({
    toolCalls: z.array(ScriptedToolCallSchema).min(1).max(64),
    text: z.string().max(MAX_MESSAGE_CHARS).optional(),
  }),
]);

const Secret = z.string().min(1).max(4096);

/** What every real provider takes besides its endpoint and credentials. */
const callSettings = {
  /** The provider's model name, e.g. "gpt-4.1-mini", "claude-sonnet-4-5", "gemini-2.5-flash". */
  name: z.string().min(1).max(256),
  /** Per provider request; default 60 s. */
  timeoutMs: z.number().int().min(100).max(600_000).optional(),
  /**
   * Attempts of one model call in all (default 3): a request the provider certainly did not
   * process (429, 529 and other 5xx answers, a refused connection) is tried again after its
   * retry-after or an exponential back-off. 1: never retried.
   */
  maxAttempts: z.number().int().min(1).max(10).optional(),
  /** Generated-token limit per call; Anthropic requires one (default 4096). */
  maxTokens: z.number().int().positive().max(1_000_000).optional(),
};

/**
 * A real provider with an API key. `apiKey` (and Bedrock's key pair) is encrypted at rest and
 * never journaled, logged or returned.
 */
function keyed<P extends string>(provider: P) {
  return z.strictObject({
    provider: z.literal(provider),
    ...callSettings,
    apiKey: Secret,
    /** Another endpoint speaking the same wire format (a local model server, a proxy). */
    baseUrl: HttpUrlSchema.optional(),
  });
}

/** OpenAI Chat Completions (and any server speaking it), hand-written client. */
export const OpenAIModelConfigSchema = keyed("openai");
/** Anthropic Messages, hand-written client; `thinking` turns extended thinking on. */
export const AnthropicModelConfigSchema = keyed("anthropic")
  .extend({
    /**
     * Extended thinking with this many tokens of budget (at least 1024): the thinking is journaled
     * with the answer and sent back, signed, with the tool results that follow. `maxTokens` must be
     * larger; without one, it is the budget plus 4096.
     */
    thinking: z.strictObject({ budgetTokens: z.number().int().min(1024).max(1_000_000) }).optional(),
  })
  .refine((c) => !c.thinking || c.maxTokens === undefined || c.maxTokens > c.thinking.budgetTokens, {
    message: "maxTokens must be larger than thinking.budgetTokens",
    path: ["maxTokens"],
  });
/** OpenAI's Responses API, through @ai-sdk/openai. */
export const OpenAIResponsesModelConfigSchema = keyed("openai-responses");
/** Google Gemini (generativelanguage.googleapis.com), through @ai-sdk/google. */
export const GoogleModelConfigSchema = keyed("google");
/** Any server speaking Chat Completions (Mistral, Groq, vLLM, …), through @ai-sdk/openai-compatible. */
export const OpenAICompatibleModelConfigSchema = keyed("openai-compatible").extend({ baseUrl: HttpUrlSchema });

/** Azure OpenAI (Responses API), through @ai-sdk/azure: `name` is the deployment. */
export const AzureModelConfigSchema = keyed("azure")
  .extend({
    /** `https://<resourceName>.openai.azure.com/openai`; or give `baseUrl`. */
    resourceName: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/i)
      .optional(),
    apiVersion: z.string().max(64).optional(),
  })
  .refine((c) => c.resourceName !== undefined || c.baseUrl !== undefined, {
    message: "azure needs resourceName or baseUrl",
    path: ["resourceName"],
  });

/**
 * Amazon Bedrock (Converse API), through @ai-sdk/amazon-bedrock: an API key (bearer), or an access
 * key pair signed with SigV4; never the server's own AWS credentials.
 */
export const BedrockModelConfigSchema = z
  .strictObject({
    provider: z.literal("bedrock"),
    ...callSettings,
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/),
    apiKey: Secret.optional(),
    accessKeyId: z.string().min(16).max(128).optional(),
    secretAccessKey: Secret.optional(),
    sessionToken: Secret.optional(),
    baseUrl: HttpUrlSchema.optional(),
  })
  .refine((c) => (c.apiKey !== undefined) !== (c.accessKeyId !== undefined && c.secretAccessKey !== undefined), {
    message: "bedrock needs apiKey, or accessKeyId and secretAccessKey (not both)",
    path: ["apiKey"],
  })
  .refine((c) => c.sessionToken === undefined || c.accessKeyId !== undefined, {
    message: "sessionToken goes with accessKeyId and secretAccessKey",
    path: ["sessionToken"],
  });

export const ModelConfigSchema = z.discriminatedUnion("provider", [
  z.strictObject({
    provider: z.literal("scripted"),
    script: z.array(ScriptStepSchema).max(MAX_SCRIPT_STEPS),
    /** Answers to tools' model calls (ctx.model), in order; empty text once exhausted. */
    toolScript: z.array(ScriptStepSchema).max(MAX_SCRIPT_STEPS).optional(),
  }),
  OpenAIModelConfigSchema,
  AnthropicModelConfigSchema,
  OpenAIResponsesModelConfigSchema,
  GoogleModelConfigSchema,
  OpenAICompatibleModelConfigSchema,
  AzureModelConfigSchema,
  BedrockModelConfigSchema,
]);

export type ScriptStep = z.infer<typeof ScriptStepSchema>;
export type ModelConfig = z.infer<typeof ModelConfigSchema>;
/** A provider that is not the scripted one: it has credentials and an endpoint. */
export type RealModelConfig = Exclude<ModelConfig, { provider: "scripted" }>;

/** The credential fields of a configuration: sealed at rest, never shown. */
export const MODEL_SECRET_FIELDS = ["apiKey", "accessKeyId", "secretAccessKey", "sessionToken"] as const;
