/**
 * What a tenant's JSON Schema may be, checked where it is declared (session creation, an MCP
 * server's tools/list): small and shallow enough that compiling and walking it costs little, and,
 * where Brain alone checks a tool's values, made of patterns RE2 can run.
 */
import { linearPattern } from "./linear-regexp.js";

/** The largest schema a placement may carry, serialised. */
export const MAX_SCHEMA_BYTES = 128 * 1024;
/** The deepest nesting of objects and arrays in a schema. */
export const MAX_SCHEMA_DEPTH = 48;

/** Keywords whose values are data, never schemas: a `pattern` inside them is not a pattern. */
const DATA_KEYWORDS = new Set(["const", "default", "enum", "examples"]);

/** Why a schema is too large or too deep, or null. */
export function schemaSizeProblem(schema: unknown): string | null {
  const bytes = Buffer.byteLength(JSON.stringify(schema) ?? "", "utf8");
  if (bytes > MAX_SCHEMA_BYTES) return `it is ${bytes} bytes; at most ${MAX_SCHEMA_BYTES} are accepted`;
  if (depthOf(schema, 0) > MAX_SCHEMA_DEPTH) return `it nests deeper than ${MAX_SCHEMA_DEPTH} levels`;
  return null;
}

function depthOf(value: unknown, depth: number): number {
  if (depth > MAX_SCHEMA_DEPTH || typeof value !== "object" || value === null) return depth;
  let deepest = depth + 1;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child, depth + 1));
  return deepest;
}

/** The patterns (`pattern`, `patternProperties` keys) RE2 cannot run, each with its JSON pointer. */
export function unsupportedPatterns(schema: unknown, at = ""): { path: string; reason: string }[] {
  if (typeof schema !== "object" || schema === null) return [];
  const found: { path: string; reason: string }[] = [];
  for (const [key, value] of Object.entries(schema)) {
    const path = `${at}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (DATA_KEYWORDS.has(key)) continue;
    if (key === "pattern" && typeof value === "string") {
      const compiled = linearPattern(value);
      if (compiled instanceof Error) found.push({ path, reason: compiled.message });
      continue;
    }
    if (key === "patternProperties" && typeof value === "object" && value !== null) {
      for (const source of Object.keys(value)) {
        const compiled = linearPattern(source);
        if (compiled instanceof Error) found.push({ path, reason: compiled.message });
      }
    }
    found.push(...unsupportedPatterns(value, path));
  }
  return found;
}
