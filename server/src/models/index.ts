// `@aexhq/brain-server/models`: the model providers and the tool model-call service, shared with
// the worker (components call the session's model through the WIT `model` import).
export { sealSessionSecrets, sessionModelConfig, storedModelConfig } from "./credentials.js";
export {
  createProvider,
  type ModelCallContext,
  ModelCallError,
  type ModelProvider,
  type ProviderRequest,
  type ProviderResponse,
  publicModelConfig,
} from "./provider.js";
export { type ToolModelAnswer, ToolModelCalls, type ToolModelCallsDeps } from "./tool-model-calls.js";
