// `@aexhq/brain-core/models`: the model providers and the tool model-call service. The server's
// Agentloop and host connections use them, and so does the worker (components call the session's
// model through the WIT `model` import).
export { sealSessionSecrets, sessionModelConfig, storedModelConfig } from "./credentials.js";
export { createProvider, publicModelConfig } from "./provider.js";
export { DEFAULT_MAX_ATTEMPTS } from "./retry.js";
export { type ToolModelAnswer, ToolModelCalls, type ToolModelCallsDeps } from "./tool-model-calls.js";
export {
  type ModelAttempt,
  type ModelCallContext,
  ModelCallError,
  type ModelMessage,
  type ModelProvider,
  type ModelTool,
  type ModelToolCall,
  type ProviderRequest,
  type ProviderResponse,
  type ProviderTransport,
  recordedResponse,
  type StopReason,
} from "./types.js";
