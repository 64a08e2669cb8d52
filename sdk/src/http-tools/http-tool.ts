import type { z } from "zod";
import { BrainError } from "../contracts.js";
import { http } from "../environment.js";
import { type PlacedTool, tool } from "../tool.js";

export interface HttpToolDefinition {
  /** The name the model sees. */
  name: string;
  description: string;
  /** Advertised as JSON Schema (what it accepts before parsing); Brain sends the input as is. */
  input: z.ZodType;
  /** When given, the answer's body is checked against its JSON Schema (failures: invalid_output). */
  output?: z.ZodType;
  /** Where the application answers: Brain POSTs the input as JSON; the 2xx JSON body is the result. */
  url: string;
  /**
   * The tool's own run limit in ms; absent or 0: none of its own, so a call runs until the earliest
   * caller deadline (session or turn) or BRAIN_MAX_TOOL_SECS, if any, or unlimited.
   */
  timeoutMs?: number;
}

/**
 * A placed v1 HTTP tool: the plain-JSON convention of `http()` (`tool({ ... })({ env: http(url) })`
 * without a function here). Brain runs it with a worker: the response body is the result, never an
 * outcome envelope; a non-2xx status, a non-JSON body or an unreachable URL is `http_error`.
 */
export function httpTool(definition: HttpToolDefinition): PlacedTool {
  const { url, name, ...declaration } = definition;
  const declared = tool({
    ...declaration,
    name,
    run: () => {
      throw new BrainError("invalid_tool", `${name} is served at its URL (httpTool); it has no function to run here.`);
    },
  });
  return declared({ env: http(url) });
}
