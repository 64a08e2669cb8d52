// Shared pieces of the provider tests: the real provider classes (from dist/, via createProvider)
// pointed at the fake provider servers of testkit/fake-providers.ts.
import type { ModelConfig } from "@aexhq/brain-contracts";
import {
  createProvider,
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderTransport,
} from "@aexhq/brain-core/models";
import { loopbackEgress } from "../../../testkit/egress.js";
import {
  type FakeProvider,
  type RecordedRequest,
  startFakeAnthropic,
  startFakeOpenAI,
} from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

export const KEY = "sk-test-0123456789abcdef-secret";

export type Flavor = "openai" | "anthropic";

export function startFake(flavor: Flavor, options: { apiKey?: string } = {}): Promise<FakeProvider> {
  return flavor === "openai" ? startFakeOpenAI(options) : startFakeAnthropic(options);
}

export type ProviderExtra = {
  apiKey?: string;
  timeoutMs?: number;
  maxTokens?: number;
  name?: string;
  maxAttempts?: number;
};

/** The fakes serve on loopback, which the guard opens here; the egress tests give their own. */
const REACHES_LOOPBACK: ProviderTransport = { fetch: loopbackEgress().fetch, maxAnswerBytes: 16 * 1024 * 1024 };

export function provider(
  flavor: Flavor,
  baseUrl: string,
  extra: ProviderExtra = {},
  transport: ProviderTransport = REACHES_LOOPBACK,
): ModelProvider {
  const config = { provider: flavor, name: "test-model", apiKey: KEY, baseUrl, ...extra } as ModelConfig;
  return createProvider(config, transport);
}

export function context(signal: AbortSignal = new AbortController().signal): ModelCallContext {
  return { signal, index: 0, origin: "tool" };
}

export const hello: ProviderRequest = { messages: [{ role: "user", content: "hello" }], tools: [] };

/** The ModelCallError a call rejects with (fails the test if it resolves or throws something else). */
export async function failure(call: Promise<unknown>): Promise<ModelCallError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ModelCallError)) throw new Error(`expected a ModelCallError, got ${String(error)}`);
  return error;
}

export interface FakeProviderSuite {
  fake: FakeProvider;
  /** The real `flavor` provider, configured with `extra`, pointed at the fake. */
  model(extra?: ProviderExtra): ModelProvider;
  /** The request one `complete(request)` of `model(extra)` sent to the fake. */
  lastBody(request: ProviderRequest, extra?: ProviderExtra): Promise<RecordedRequest>;
}

/** A fake `flavor` provider for the enclosing suite: started before its tests, closed after them. */
export function fakeProviderSuite(flavor: Flavor): FakeProviderSuite {
  const fake = startedBeforeAll(() => startFake(flavor));
  const model = (extra: ProviderExtra = {}) => provider(flavor, fake.url, extra);
  const lastBody = async (request: ProviderRequest, extra: ProviderExtra = {}) => {
    const before = fake.requests.length;
    await model(extra).complete(request, context());
    return fake.requests[before]!;
  };
  return { fake, model, lastBody };
}
