// Fake providers for the wire formats Brain reaches through the AI SDK's packages: real HTTP
// servers on 127.0.0.1, with the same replies, recording and key checks as fake-providers.ts.
//
//   const gemini = await startFakeGemini({ apiKey: "g-test" });
//   // model config: { provider: "google", name: "gemini-test", apiKey: "g-test", baseUrl: gemini.url }
//
// OpenAI-compatible servers speak Chat Completions: startFakeOpenAI serves them.
import { bedrockWire, geminiWire, responsesWire } from "./fake-ai-wires.js";
import { type FakeProvider, type FakeProviderOptions, startFake } from "./fake-providers.js";

const bearer = (authorization: string | undefined) => (authorization ?? "").replace(/^Bearer /, "");

/** Gemini's streamGenerateContent at `${url}/models/<name>:streamGenerateContent?alt=sse`; `url` ends in /v1beta. */
export function startFakeGemini(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: geminiWire,
      route: (url) => /^\/v1beta\/models\/[^/:]+:streamGenerateContent\?alt=sse$/.test(url),
      streams: () => true,
      base: "/v1beta",
      presentedKey: (h) => String(h["x-goog-api-key"] ?? ""),
      keyRejection: (presented) => `API key not valid: ${presented}. Please pass a valid API key.`,
    },
    options,
  );
}

/** OpenAI's Responses API at `${url}/responses`; `url` ends in /v1. */
export function startFakeResponses(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: responsesWire,
      route: "/v1/responses",
      base: "/v1",
      presentedKey: (h) => bearer(h.authorization),
      keyRejection: (presented) => `Incorrect API key provided: ${presented}.`,
    },
    options,
  );
}

/** Azure OpenAI's Responses API at `${url}/responses`, its key in `api-key`; `url` ends in /openai. */
export function startFakeAzure(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: responsesWire,
      route: "/openai/responses",
      base: "/openai",
      presentedKey: (h) => String(h["api-key"] ?? ""),
      keyRejection: (presented) => `Access denied due to invalid subscription key ${presented}.`,
    },
    options,
  );
}

/**
 * Bedrock's ConverseStream at `${url}/model/<id>/converse-stream`, answering AWS event-stream
 * frames. The key it checks is an API key (`Authorization: Bearer`) or, for SigV4, the access key
 * id the signature's credential scope names (the fake does not verify signatures).
 */
export function startFakeBedrock(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: bedrockWire,
      route: (url) => /^\/model\/[^/]+\/converse-stream$/.test(url),
      streams: () => true,
      streamType: "application/vnd.amazon.eventstream",
      base: "",
      presentedKey: (h) => {
        const auth = String(h.authorization ?? "");
        return /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(auth)?.[1] ?? bearer(auth);
      },
      keyRejection: (presented) => `The security token included in the request is invalid: ${presented}`,
    },
    options,
  );
}
