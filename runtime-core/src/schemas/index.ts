// `@aexhq/brain-core/schemas`: tenants' JSON Schemas, checked in linear time (patterns run by RE2)
// and bounded where they are declared.

export { linearPattern, linearRegExp, linearRegExpOrSkip, re2Source } from "./linear-regexp.js";
export { type CheckedInput, type CheckOptions, checkedInput, checkedOutcome, inputProblem } from "./output-schema.js";
export { MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, schemaSizeProblem, unsupportedPatterns } from "./shape.js";
