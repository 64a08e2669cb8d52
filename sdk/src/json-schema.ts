import { z } from "zod";
import { BrainError, findNonJson, type ToolPlacement } from "./contracts.js";

/** A JSON Schema document as a tool placement carries it. */
export type JsonSchema = ToolPlacement["inputSchema"];

/**
 * Exports a zod schema once, at declaration. `io: "input"` describes what the schema accepts
 * before parsing (defaulted fields optional); `io: "output"` describes parsed output.
 * Anything JSON Schema cannot express fails now, not when a model first calls the tool.
 */
export function exportJsonSchema(schema: z.ZodType, io: "input" | "output", what: string): JsonSchema {
  let exported: unknown;
  try {
    exported = z.toJSONSchema(schema, { io, unrepresentable: "throw" });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new BrainError("unrepresentable_schema", `${what} cannot be represented as JSON Schema: ${reason}`);
  }
  const bad = findNonJson(exported);
  if (bad !== null) {
    throw new BrainError("unrepresentable_schema", `${what} exports a non-JSON value at ${bad}.`);
  }
  return exported as JsonSchema;
}
