// `@aexhq/brain-core/environments`: the HTTP Environment interpreter. The worker runs placed
// descriptor tools with it; the server's ctx.environments control (server/src/environments) uses
// it for `call` and `setup`.
export { type HttpJsonDescriptor, HttpJsonDescriptorSchema, parseDescriptor } from "./descriptor.js";
export { ERROR_EXCERPT_BYTES, sendHttpCall } from "./http-client.js";
export { buildHttpCall, type EnvironmentTarget, type HttpCall, joinBase } from "./http-request.js";
export { type Invocation, invokeInEnvironment } from "./invoke.js";
export { type LoadedEnvironment, openEnvironment } from "./loaded.js";
export { REDACTED, redact, secretsOf } from "./redact.js";
export { type EnvironmentDeps, type Readiness, readyEnvironment, SETUP_TIMEOUT_MS, setupNow } from "./setup.js";
