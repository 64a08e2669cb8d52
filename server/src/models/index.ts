// `@aexhq/brain-server/models`: the model providers and the tool model-call service, shared with
// the worker (components call the session's model through the WIT `model` import).
export { sealSessionSecrets, sessionModelConfig, storedModelConfig } from "./credentials.js";
export { createProvider, publicModelConfig } from "./provider.js";
export { type ToolModelAnswer, ToolModelCalls, type ToolModelCallsDeps } from "./tool-model-calls.js";
export {
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderResponse,
} from "./types.js";
