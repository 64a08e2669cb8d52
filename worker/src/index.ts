// The worker's public entry: every export here is API a launcher may use (`npm start` runs a
// worker in the same process as a server with these).
export { parseWorkerConfig, type WorkerConfig } from "./config.js";
export { createLogger, type Logger } from "./log.js";
export { SUPPORTED_INTERFACES, unsupportedImports } from "./sandbox/imports.js";
export { type ComponentLimits, DEFAULT_COMPONENT_LIMITS } from "./sandbox/limits.js";
export { WORKSPACE_PREOPEN } from "./sandbox/wasi-filesystem.js";
export { type RunningWorker, type StartWorkerOptions, startWorker } from "./worker.js";
