export * from "./errors.js";
export * from "./frames.js";
export * from "./http.js";
export * from "./journal.js";
export * from "./json.js";
export * from "./limits.js";
export * from "./model.js";
export * from "./outcome.js";
export { renderJsonSchema, wireSchemas } from "./wire-schemas.js";
