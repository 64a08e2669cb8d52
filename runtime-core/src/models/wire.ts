import { ModelCallError } from "./types.js";

/**
 * Defensive readers for provider JSON: a provider (or a server imitating one) may omit or mistype
 * any field, and a missing optional field must not turn into an exception deep in a parser.
 */
export type Json = Record<string, unknown>;

export function object(value: unknown): Json | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function array(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function string(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

/**
 * A tool call's arguments as the model wrote them: JSON text. Empty text is an empty object (some
 * models stream nothing for a tool without parameters); anything else must parse.
 */
export function toolArguments(provider: string, tool: string, text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelCallError(
      "model_error",
      `${provider} answered a call of tool ${tool} with arguments that are not JSON`,
    );
  }
}
