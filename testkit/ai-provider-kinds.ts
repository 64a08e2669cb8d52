// The providers Brain reaches through the AI SDK's packages, each with its local fake and the
// configuration that points a session at it: what the provider tests run over.
import type { ModelConfig } from "@aexhq/brain-contracts";
import { startFakeAzure, startFakeBedrock, startFakeGemini, startFakeResponses } from "./fake-ai-providers.js";
import { type FakeProvider, startFakeOpenAI } from "./fake-providers.js";

export interface AiProviderKind {
  provider: "google" | "openai-responses" | "openai-compatible" | "azure" | "bedrock";
  /** Starts its fake; `key`: the credential it accepts (Bedrock: the access key id). */
  start(key?: string): Promise<FakeProvider>;
  /** A configuration pointed at `url`, with `secret` as its key (Bedrock: the secret access key). */
  config(url: string, secret: string): ModelConfig;
  /** What the fake checks: the key itself, or (Bedrock) the access key id. */
  presented(secret: string): string;
  /** Whether the wire carries the model's tool-call ids (Gemini's does not: the SDK makes them). */
  keepsCallIds: boolean;
}

const ACCESS_KEY_ID = "AKIAFAKEACCESSKEY001";

export const AI_PROVIDER_KINDS: AiProviderKind[] = [
  {
    provider: "google",
    start: (key) => startFakeGemini(key ? { apiKey: key } : {}),
    config: (url, secret) => ({ provider: "google", name: "gemini-test", apiKey: secret, baseUrl: url }),
    presented: (secret) => secret,
    keepsCallIds: false,
  },
  {
    provider: "openai-responses",
    start: (key) => startFakeResponses(key ? { apiKey: key } : {}),
    config: (url, secret) => ({ provider: "openai-responses", name: "gpt-test", apiKey: secret, baseUrl: url }),
    presented: (secret) => secret,
    keepsCallIds: true,
  },
  {
    provider: "openai-compatible",
    start: (key) => startFakeOpenAI(key ? { apiKey: key } : {}),
    config: (url, secret) => ({ provider: "openai-compatible", name: "mistral-test", apiKey: secret, baseUrl: url }),
    presented: (secret) => secret,
    keepsCallIds: true,
  },
  {
    provider: "azure",
    start: (key) => startFakeAzure(key ? { apiKey: key } : {}),
    config: (url, secret) => ({ provider: "azure", name: "my-deployment", apiKey: secret, baseUrl: url }),
    presented: (secret) => secret,
    keepsCallIds: true,
  },
  {
    provider: "bedrock",
    start: (key) => startFakeBedrock(key ? { apiKey: key } : {}),
    config: (url, secret) => ({
      provider: "bedrock",
      name: "anthropic.claude-test-v1:0",
      region: "us-east-1",
      accessKeyId: ACCESS_KEY_ID,
      secretAccessKey: secret,
      baseUrl: url,
    }),
    presented: () => ACCESS_KEY_ID,
    keepsCallIds: true,
  },
];
