// `@aexhq/brain-server/environments`: the HTTP Environment interpreter, shared with the worker
// (which runs placed descriptor tools) and used by the server for ctx.environments.call and setup.
export { type HttpJsonDescriptor, HttpJsonDescriptorSchema, parseDescriptor } from "./descriptor.js";
export { ERROR_EXCERPT_BYTES, sendHttpCall } from "./http-client.js";
export { buildHttpCall, type EnvironmentTarget, type HttpCall, joinBase } from "./http-request.js";
export { type Invocation, invokeInEnvironment } from "./invoke.js";
export { type LoadedEnvironment, openEnvironment } from "./loaded.js";
export { REDACTED, redact, secretsOf } from "./redact.js";
export { type EnvironmentDeps, type Readiness, readyEnvironment, SETUP_TIMEOUT_MS, setupNow } from "./setup.js";
