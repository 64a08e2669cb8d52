import { McpQuerySchema, McpRpcRequestSchema, McpRpcResponseSchema } from "../mcp.js";
import { type RouteDescription, SESSION, SessionParams } from "./route-kit.js";

const McpRpcRequest = McpRpcRequestSchema.meta({ id: "McpRpcRequest" });
const McpRpcResponse = McpRpcResponseSchema.meta({ id: "McpRpcResponse" });

const STATELESS = "This endpoint is stateless: no SSE stream to open and no MCP session to end.";

/**
 * The MCP endpoint: its refusals are JSON-RPC error bodies (Brain's code in `error.data.code`),
 * at the status Brain's code has.
 */
export const MCP_ROUTES: Readonly<Record<string, RouteDescription>> = {
  "POST /v1/sessions/:id/mcp": {
    summary: "The session as an MCP server (Streamable HTTP, stateless)",
    description:
      "One JSON-RPC message, answered as JSON: initialize, ping, tools/list, tools/call (plain or as a task), tasks/get, tasks/result, tasks/list, tasks/cancel. Errors inside a request are JSON-RPC errors in a 200 answer.",
    auth: "token",
    params: SessionParams,
    query: McpQuerySchema,
    body: McpRpcRequest,
    responses: {
      200: { description: "The JSON-RPC answer.", schema: McpRpcResponse },
      202: { description: "A notification, accepted." },
    },
    errors: [...SESSION, "body_too_large", "unsupported_media_type", "session_ended"],
    errorBody: "jsonrpc",
  },
  "GET /v1/sessions/:id/mcp": {
    summary: "Not allowed (405)",
    description: STATELESS,
    auth: "token",
    params: SessionParams,
    responses: { 405: { description: "POST only.", schema: McpRpcResponse } },
    errors: SESSION,
    errorBody: "jsonrpc",
  },
  "DELETE /v1/sessions/:id/mcp": {
    summary: "Not allowed (405)",
    description: STATELESS,
    auth: "token",
    params: SessionParams,
    responses: { 405: { description: "POST only.", schema: McpRpcResponse } },
    errors: SESSION,
    errorBody: "jsonrpc",
  },
};
