/** One tool call an MCP client asks for (Brain as an MCP server). */
export interface McpCall {
  tool: string;
  /** Stands in for the model's call id: the task's id, or a fresh one for a plain call. */
  callId: string;
  input: unknown;
  /** Journaled as the tool_call_started record's `origin`: `{ type: "mcp", ... }`. */
  origin: Record<string, unknown> & { type: "mcp" };
}

/** Whether a tool_call_started payload is an MCP client's call rather than the model's. */
export function isMcpOrigin(payload: Record<string, unknown>): boolean {
  return (payload.origin as { type?: unknown } | undefined)?.type === "mcp";
}
