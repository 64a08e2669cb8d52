import { z } from "zod";

/**
 * The MCP endpoint (`POST /v1/sessions/:id/mcp`): its query, and the JSON-RPC envelopes it takes
 * and answers. What goes inside `params` and `result` is MCP's own (protocol 2025-11-25), checked
 * by the official SDK's schemas, not re-described here.
 */

/** `?tools=a,b`: the named set of the session's tools to expose (all when absent). */
export const McpQuerySchema = z.strictObject({
  tools: z
    .string()
    .max(64 * 129)
    .optional(),
});

const RpcId = z.union([z.string(), z.number().int()]);

/** One JSON-RPC request or notification (batches are refused). */
export const McpRpcRequestSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: RpcId.optional(),
  method: z.string(),
  params: z.record(z.string(), z.unknown()).optional(),
});

/** A JSON-RPC answer: a result, or an error whose `data.code` is one of Brain's error codes. */
export const McpRpcResponseSchema = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: RpcId.nullable(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z
    .object({ code: z.number().int(), message: z.string(), data: z.looseObject({ code: z.string() }).optional() })
    .optional(),
});
