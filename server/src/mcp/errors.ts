import { type ErrorCode as BrainCode, BrainError } from "@aexhq/brain-contracts";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { toBrainError } from "../plugins/errors.js";

/**
 * Errors of the MCP endpoint are JSON-RPC errors, and every one carries Brain's stable code as
 * `data.code` (docs/errors.md). Input a client can fix is `-32602` (Invalid params), a
 * request the session can no longer take `-32600` (Invalid request), and Brain's own trouble
 * (`database_unavailable`, `write_conflict`, `commit_unknown`, `not_ready`, `internal_error`) `-32603`.
 */
function rpcCodeOf(code: BrainCode): number {
  switch (code) {
    case "invalid_request":
    case "unstorable_text":
    case "not_found":
    case "call_not_found":
      return ErrorCode.InvalidParams;
    case "session_ended":
      return ErrorCode.InvalidRequest;
    default:
      return ErrorCode.InternalError;
  }
}

/** Any failure inside a request handler, as the JSON-RPC error the SDK answers with. */
export function toMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  const brain = toBrainError(error);
  // Unexpected failures say nothing about their cause on the wire (it has been logged elsewhere).
  const message = brain.code === "internal_error" ? "Internal error" : brain.message;
  return new McpError(rpcCodeOf(brain.code), message, { code: brain.code });
}

/** A JSON-RPC error response for a request refused before it reached the MCP server. */
export function rpcErrorBody(code: number, message: string, brainCode: BrainCode, id: string | number | null = null) {
  return { jsonrpc: "2.0" as const, id, error: { code, message, data: { code: brainCode } } };
}

/**
 * The HTTP answer to a request refused before it reached the MCP server (authentication, access,
 * body limits, malformed JSON): Brain's status, with a JSON-RPC error body an MCP client reads.
 */
export function httpRefusal(error: unknown): { status: number; body: ReturnType<typeof rpcErrorBody> } {
  const parse = (error as { code?: unknown }).code;
  if (parse === "FST_ERR_CTP_INVALID_JSON_BODY" || parse === "FST_ERR_CTP_EMPTY_JSON_BODY") {
    return {
      status: 400,
      body: rpcErrorBody(ErrorCode.ParseError, "Parse error: the body is not JSON.", "invalid_request"),
    };
  }
  const brain = error instanceof BrainError ? error : toBrainError(error);
  const code = brain.httpStatus >= 500 ? ErrorCode.InternalError : ErrorCode.InvalidRequest;
  const message = brain.code === "internal_error" ? "Internal error" : brain.message;
  return { status: brain.httpStatus, body: rpcErrorBody(code, message, brain.code) };
}
